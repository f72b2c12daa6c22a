import { createHash } from 'node:crypto';
import sharp, { type Metadata, type Sharp } from 'sharp';
import { ValidationError } from '../../http/errors.js';

// One libvips thread per image and no operation cache: uploads are rare and the process is small
// (128 MB of JavaScript heap); measured in bench/media.bench.ts, see docs/decisions.md.
sharp.concurrency(1);
sharp.cache(false);

/** The formats the library takes, as sharp names them, with their media types and extensions. */
export const FORMATS = {
  png: { type: 'image/png', ext: 'png' },
  jpeg: { type: 'image/jpeg', ext: 'jpg' },
  gif: { type: 'image/gif', ext: 'gif' },
  webp: { type: 'image/webp', ext: 'webp' },
} as const;
export type Format = keyof typeof FORMATS;

/** The largest side of an image, in pixels. */
export const MAX_SIDE = 8000;
/** The most frames an animation may have. */
export const MAX_FRAMES = 100;
/** The widest thumbnail, in pixels. */
export const THUMB_WIDTH = 200;

export const TYPE_MESSAGE = 'The file must be an image of type: png, jpeg, gif, webp.';
export const DIMENSIONS_MESSAGE = `The file has invalid image dimensions: at most ${MAX_SIDE} × ${MAX_SIDE} pixels.`;
export const FRAMES_MESSAGE = `The file must not have more than ${MAX_FRAMES} frames.`;
export const DAMAGED_MESSAGE = 'The file is not a complete image: it is damaged or cut short.';

const refuse = (message: string) => new ValidationError({ file: [message] });

/**
 * The format the first bytes announce (PNG, JPEG, GIF or WebP signatures), or null. Checked before
 * any decoder sees the bytes, so SVG, PDF, HEIF and every other format libvips could read never
 * reach their parsers.
 */
export function sniffFormat(bytes: Buffer): Format | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const head = bytes.subarray(0, 6).toString('latin1');
  if (head === 'GIF87a' || head === 'GIF89a') return 'gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'webp';
  return null;
}

/** What an upload becomes: the cleaned image and its thumbnail. */
export interface CleanImage {
  format: Format;
  data: Buffer;
  width: number;
  height: number;
  frames: number;
  etag: string;
  thumb: Buffer;
  thumbType: string;
}

/** Encodes to the image's own format; every encoder writes no metadata unless asked (sharp's default). */
function encode(pipeline: Sharp, format: Format): Sharp {
  switch (format) {
    case 'png':
      return pipeline.png();
    case 'jpeg':
      return pipeline.jpeg({ quality: 85, mozjpeg: false });
    case 'gif':
      return pipeline.gif();
    case 'webp':
      return pipeline.webp({ quality: 85 });
  }
}

/**
 * Checks and cleans an uploaded image: the format from its content (signature, then the decoder's
 * own reading), its size from the header before anything is decoded (and sharp's
 * `limitInputPixels` as a second bound), then a full decode and re-encode in the same format.
 * Re-encoding drops every byte that is not pixels: EXIF (GPS included), XMP, ICC, comments, and
 * whatever follows or hides in the file (a ZIP or HTML polyglot comes out a plain image). The EXIF
 * orientation is applied first; an animation keeps its frames, delays and loop count.
 * Throws a ValidationError on `file` for anything it refuses; never another error for bad bytes.
 */
export async function cleanImage(bytes: Buffer): Promise<CleanImage> {
  const sniffed = sniffFormat(bytes);
  if (!sniffed) throw refuse(TYPE_MESSAGE);
  // Sequential reading (sharp's default, kept explicit) lets libvips stream a still image through
  // decode and encode in strips instead of holding it whole (a 12-megapixel photo is 36 MB of pixels).
  const options = { limitInputPixels: MAX_SIDE * MAX_SIDE, failOn: 'warning' as const, sequentialRead: true };
  let meta: Metadata;
  try {
    // The header only (no pixel is decoded), read without the pixel bound so that an oversized
    // image is told apart from a damaged one.
    meta = await sharp(bytes, { ...options, limitInputPixels: false }).metadata();
  } catch {
    throw refuse(DAMAGED_MESSAGE);
  }
  if (meta.format !== sniffed) throw refuse(TYPE_MESSAGE);
  const frames = meta.pages ?? 1;
  const frameHeight = meta.pageHeight ?? meta.height ?? 0;
  const width = meta.width ?? 0;
  if (!width || !frameHeight || width > MAX_SIDE || frameHeight > MAX_SIDE) throw refuse(DIMENSIONS_MESSAGE);
  if (frames > MAX_FRAMES) throw refuse(FRAMES_MESSAGE);
  const animated = frames > 1;
  try {
    // An animation's frames are decoded as one tall strip: the pixel bound covers all of them.
    const input = sharp(bytes, { ...options, animated, limitInputPixels: MAX_SIDE * MAX_SIDE * (animated ? MAX_FRAMES : 1) });
    // Orientation is an EXIF matter of still photos; libvips cannot rotate a strip of frames.
    const data = await encode(animated ? input : input.rotate(), sniffed).toBuffer();
    const out = await sharp(data, { animated }).metadata();
    const thumbFormat: Format = sniffed === 'gif' ? 'png' : sniffed;
    const thumb = await encode(sharp(data).resize({ width: THUMB_WIDTH, withoutEnlargement: true }), thumbFormat).toBuffer();
    return {
      format: sniffed,
      data,
      width: out.width ?? width,
      height: out.pageHeight ?? out.height ?? frameHeight,
      frames: out.pages ?? 1,
      etag: createHash('sha256').update(data).digest('base64url').slice(0, 27),
      thumb,
      thumbType: FORMATS[thumbFormat].type,
    };
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    // Whatever libvips could not read (truncated, corrupt, over the pixel bound) is the file's fault.
    throw refuse(DAMAGED_MESSAGE);
  }
}

/** Characters kept in a stored name; anything else becomes `-`. */
const UNSAFE = /[^A-Za-z0-9._-]+/g;

/**
 * The name an image is listed and served under: the last part of the name sent (no folders), only
 * letters, digits, `.`, `_` and `-` (control characters and the rest replaced), no leading dots,
 * at most 100 characters, and the extension of the format found in the content.
 */
export function safeName(sent: string, format: Format): string {
  const last = sent.split(/[/\\]/).pop() ?? '';
  const base = last
    .replace(/\.[^.]*$/, '')
    .replace(UNSAFE, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 90);
  return `${base || 'image'}.${FORMATS[format].ext}`;
}
