import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { MediaTable } from '../../db/types.js';
import { ListOf, PagingQuery, QueryIds, Success, Timestamp } from '../../http/schemas.js';
import type { MediaUse } from './media.queries.js';

/** A listed image: its row without the bytes. */
export type MediaRow = Omit<Selectable<MediaTable>, 'data' | 'thumb'>;

export const MediaIdQuery = QueryIds('id');
export const ListMediaQuery = PagingQuery;

/** The upload's form, as documented: the route reads the multipart stream itself. */
export const UploadMediaBody = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'A PNG, JPEG, GIF or WebP image (recognised by its content), at most `MAX_MEDIA_MB` and 8000 × 8000 pixels.',
  }),
});

/** What `toMedia` returns. */
export const MediaShape = Type.Object(
  {
    id: Type.Integer(),
    filename: Type.String({
      description: 'The name sent, made safe: no folders, only letters, digits, `.`, `_`, `-`; the extension of its format.',
    }),
    content_type: Type.String({ description: 'The type found in the content: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.' }),
    size: Type.Integer({ description: 'Bytes of the stored image (after its metadata was removed).' }),
    width: Type.Integer(),
    height: Type.Integer({ description: 'After the EXIF orientation was applied; of one frame for an animation.' }),
    url: Type.String({ description: 'Public: `PUBLIC_URL/media/<token>/<filename>`; cached for a year by browsers and mail proxies.' }),
    thumb_url: Type.String({ description: 'Public: the image at most 200 px wide (the first frame of an animation).' }),
    created_at: Timestamp,
  },
  { description: 'An image of the media library.' },
);

const MediaUseShape = Type.Object({
  type: Type.Union([Type.Literal('design'), Type.Literal('single_send'), Type.Literal('automation_email')]),
  id: Type.Union([Type.Integer(), Type.String()], { description: "A design's id; a single send's or automation email's `utr`." }),
  name: Type.String({ description: "The design's or single send's name; `<automation name>: <subject>` for an automation email." }),
});

export const MediaList = ListOf('media', MediaShape, "The account's images, newest first.");
export const MediaUploaded = Success(Type.Object({ media: MediaShape }), 'Uploaded: the image as stored.');
export const MediaDetails = Success(
  Type.Object({
    media: Type.Object({
      ...MediaShape.properties,
      used_in: Type.Array(MediaUseShape, {
        description: 'The designs, single sends and automation emails (not deleted) whose HTML names its URL.',
      }),
    }),
  }),
  'The image and where it is used.',
);

/** The public URL of an image (or of its thumbnail). */
export function mediaUrl(publicUrl: string, row: Pick<MediaRow, 'token' | 'filename'>, thumb = false): string {
  return `${publicUrl}/media/${row.token}/${thumb ? 'thumb/' : ''}${encodeURIComponent(row.filename)}`;
}

/** The API shape of an image. */
export function toMedia(publicUrl: string, row: MediaRow) {
  return {
    id: row.id,
    filename: row.filename,
    content_type: row.content_type,
    size: row.size,
    width: row.width,
    height: row.height,
    url: mediaUrl(publicUrl, row),
    thumb_url: mediaUrl(publicUrl, row, true),
    created_at: row.created_at,
  };
}
export type Media = ReturnType<typeof toMedia>;
export type { MediaUse };
