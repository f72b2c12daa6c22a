import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { lockAccountMedia } from '../../db/dialect.js';
import { Conflict, NotFound, Rnf, ValidationError } from '../../http/errors.js';
import { queryListSource } from '../../http/list-source.js';
import { toId } from '../../http/schemas.js';
import { isoMicros } from '../../util/time.js';
import { cleanImage, FORMATS, safeName, type CleanImage } from './media.image.js';
import { deleteMediaRow, findMedia, findMediaUses, insertMedia, mediaBytesUsed, selectMedia, type MediaUse } from './media.queries.js';
import { toMedia, type Media, type MediaRow } from './media.schema.js';
import type { MediaUpload } from './media.upload.js';
import { Slots } from './media.slots.js';

export const QUOTA_MESSAGE = 'The media library is full.';

/** Images decoded at once in this process (one: a photo's pixels are the bulk of an upload's memory). */
const decoders = new Slots(1);

/** The list source of the account's images. */
export function listMedia(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectMedia(deps.database.db, userId),
    'id',
    (rows: MediaRow[]) => rows.map((r) => toMedia(deps.config.publicUrl, r)),
  );
}

/**
 * Cleans an upload (media.image.ts) and stores it with a new token, within the account's quota
 * (checked under the account's media lock, so concurrent uploads cannot both pass it).
 */
export async function uploadMedia(deps: AppDeps, userId: number, upload: MediaUpload): Promise<Media> {
  const { db } = deps.database;
  const quota = deps.config.mediaQuotaBytes;
  // Refused before the work when the bytes sent alone could not fit.
  if ((await mediaBytesUsed(db, userId)) + upload.bytes.length > quota) throw new ValidationError({ file: [QUOTA_MESSAGE] });
  const image: CleanImage = await decoders.run(() => cleanImage(upload.bytes));
  const row = {
    user_id: userId,
    token: randomBytes(12).toString('hex'),
    filename: safeName(upload.name, image.format),
    content_type: FORMATS[image.format].type,
    size: image.data.length,
    width: image.width,
    height: image.height,
    frames: image.frames,
    etag: image.etag,
    data: image.data,
    thumb_type: image.thumbType,
    thumb_size: image.thumb.length,
    thumb: image.thumb,
    created_at: isoMicros(deps.clock.now()),
  };
  const id = await db.transaction().execute(async (trx) => {
    await lockAccountMedia(trx, userId);
    if ((await mediaBytesUsed(trx, userId)) + row.size + row.thumb_size > quota) throw new ValidationError({ file: [QUOTA_MESSAGE] });
    return insertMedia(trx, row);
  });
  return toMedia(deps.config.publicUrl, { ...row, id });
}

async function mediaOf(deps: AppDeps, userId: number, rawId: unknown): Promise<MediaRow> {
  const id = toId(rawId);
  const row = id ? await findMedia(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(Rnf);
  return row;
}

/** One image of the account with where it is used; `Record not found` otherwise. */
export async function getMedia(deps: AppDeps, userId: number, rawId: unknown): Promise<Media & { used_in: MediaUse[] }> {
  const row = await mediaOf(deps, userId, rawId);
  const usedIn = await findMediaUses(deps.database.db, userId, row.token);
  return { ...toMedia(deps.config.publicUrl, row), used_in: usedIn };
}

const USE_LABEL: Record<MediaUse['type'], string> = { design: 'design', single_send: 'single send', automation_email: 'automation email' };

/** `The image is used by design "A", single send "B" and 2 more.`: what a refused delete says. */
function usedByText(uses: MediaUse[]): string {
  const named = uses.slice(0, 3).map((u) => `${USE_LABEL[u.type]} "${u.name}"`);
  const more = uses.length - named.length;
  const list =
    more > 0
      ? `${named.join(', ')} and ${more} more`
      : named.length > 1
        ? `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`
        : named[0];
  return `The image is used by ${list}; remove it from there first.`;
}

/**
 * Deletes an image of the account unless a design, single send or automation email names it
 * (409 saying which). Returns its token, so the caller can drop its cached copies.
 */
export async function removeMedia(deps: AppDeps, userId: number, rawId: unknown): Promise<string> {
  const row = await mediaOf(deps, userId, rawId);
  const uses = await findMediaUses(deps.database.db, userId, row.token);
  if (uses.length > 0) throw new Conflict(usedByText(uses));
  if (!(await deleteMediaRow(deps.database.db, userId, row.id))) throw new NotFound(Rnf);
  return row.token;
}
