import { deflateSync, crc32 } from 'node:zlib';
import sharp from 'sharp';
import type { Client } from '../helpers.js';
import { multipart } from './contacts-csv.helpers.js';

/** Uploads `content` as the `file` part named `name`. */
export function uploadImage(c: Client, content: Buffer | string, name = 'photo.png') {
  return c.request('POST', '/media/upload', multipart({}, { content, name }));
}

/** A still image of `format`, `width` × `height`, one colour. */
export function stillImage(format: 'png' | 'jpeg' | 'gif' | 'webp', width = 640, height = 480): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#2a7' } })
    .toFormat(format)
    .toBuffer();
}

/** An animated GIF (or WebP) of `frames` frames of 16 × 16, each a different shade. */
export async function animation(frames: number, format: 'gif' | 'webp' = 'gif'): Promise<Buffer> {
  const shades = await Promise.all(
    Array.from({ length: frames }, (_, i) =>
      sharp({ create: { width: 16, height: 16, channels: 3, background: { r: (i * 37) % 256, g: 80, b: 160 } } })
        .png()
        .toBuffer(),
    ),
  );
  return sharp(shades, { join: { animated: true } })
    .toFormat(format, { delay: 100, loop: 0 } as object)
    .toBuffer();
}

/**
 * A photo as a phone writes it: a JPEG, stored 300 × 100 with EXIF orientation 6 (shown rotated
 * to 100 × 300), GPS coordinates, a camera maker and a comment in its EXIF.
 */
export function phonePhoto(): Promise<Buffer> {
  return sharp({ create: { width: 300, height: 100, channels: 3, background: '#c33' } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'SecretCam', Model: 'Model X', ImageDescription: 'Taken at home' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A well-formed PNG header claiming `width` × `height`, with a few bytes of pixels: a decompression bomb's shape. */
export function pngClaiming(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A minimal ZIP (one stored file) holding `text`: appended to an image it makes a polyglot. */
export function zipHolding(name: string, text: string): Buffer {
  const data = Buffer.from(text);
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(10, 4);
  header.writeUInt32LE(crc32(data), 14);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(data.length, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, Buffer.from(name), data]);
}
