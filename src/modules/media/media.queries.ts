import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { MediaTable } from '../../db/types.js';
import { toCount } from '../../db/dialect.js';

/** The columns of a listed image: everything but its bytes. */
export const MEDIA_COLUMNS = [
  'id',
  'user_id',
  'token',
  'filename',
  'content_type',
  'size',
  'width',
  'height',
  'frames',
  'etag',
  'thumb_type',
  'thumb_size',
  'created_at',
] as const;

/** The account's images, without their bytes. */
export function selectMedia(db: Db, userId: number) {
  return db.selectFrom('media').select(MEDIA_COLUMNS).where('user_id', '=', userId);
}

/** One image of the account, without its bytes. */
export function findMedia(db: Db, userId: number, id: number) {
  return selectMedia(db, userId).where('id', '=', id).executeTakeFirst();
}

/** The bytes an image's public URL serves (the image or its thumbnail), by token; any account. */
export function findServedMedia(db: Db, token: string, thumb: boolean) {
  return db
    .selectFrom('media')
    .select(['content_type', 'thumb_type', 'etag', thumb ? 'thumb as bytes' : 'data as bytes'])
    .where('token', '=', token)
    .executeTakeFirst();
}

/** Whether an image with this token still exists (a cached copy is checked with it now and then). */
export async function mediaExists(db: Db, token: string): Promise<boolean> {
  return Boolean(await db.selectFrom('media').select('id').where('token', '=', token).executeTakeFirst());
}

/** The bytes the account's library holds (images and thumbnails), for the quota. */
export async function mediaBytesUsed(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('media')
    .select(sql<number>`coalesce(sum(size + thumb_size), 0)`.as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return toCount(row?.n);
}

/** Stores an image; returns its id. */
export async function insertMedia(db: Db, values: Insertable<MediaTable>): Promise<number> {
  const row = await db.insertInto('media').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes an image of the account; false when there was none. */
export async function deleteMediaRow(db: Db, userId: number, id: number): Promise<boolean> {
  const res = await db.deleteFrom('media').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** What names an image: a design, a single send or an automation email. */
export interface MediaUse {
  type: 'design' | 'single_send' | 'automation_email';
  id: number | string;
  name: string;
}

/**
 * The account's designs, single sends (and their A/B variants) and automation emails, not deleted,
 * whose HTML or MJML names `token` (it is hex, so no LIKE wildcard can be in it).
 */
export async function findMediaUses(db: Db, userId: number, token: string): Promise<MediaUse[]> {
  const like = `%${token}%`;
  const [designs, sends, variants, emails] = await Promise.all([
    db
      .selectFrom('designs')
      .select(['id', 'name'])
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('html_code', 'like', like), eb('template_json', 'like', like)]))
      .orderBy('id')
      .execute(),
    db
      .selectFrom('single_sends')
      .select(['utr', 'single_send_name'])
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('template_html', 'like', like), eb('template_json', 'like', like)]))
      .orderBy('id')
      .execute(),
    db
      .selectFrom('single_send_variants as v')
      .innerJoin('single_sends as s', 's.id', 'v.single_send_id')
      .select(['s.utr', 's.single_send_name'])
      .where('v.user_id', '=', userId)
      .where('s.deleted_at', 'is', null)
      .where((eb) => eb.or([eb('v.template_html', 'like', like), eb('v.template_json', 'like', like)]))
      .orderBy('s.id')
      .execute(),
    db
      .selectFrom('automation_schedules as e')
      .innerJoin('automations as a', 'a.id', 'e.automation_id')
      .select(['e.utr', 'e.subject', 'a.automation_name'])
      .where('e.user_id', '=', userId)
      .where('a.deleted_at', 'is', null)
      .where((eb) => eb.or([eb('e.template_html', 'like', like), eb('e.template_json', 'like', like)]))
      .orderBy('e.id')
      .execute(),
  ]);
  const uses: MediaUse[] = designs.map((d) => ({ type: 'design', id: d.id, name: d.name }));
  const seen = new Set<string>();
  for (const s of [...sends, ...variants]) {
    if (seen.has(s.utr)) continue;
    seen.add(s.utr);
    uses.push({ type: 'single_send', id: s.utr, name: s.single_send_name });
  }
  for (const e of emails) uses.push({ type: 'automation_email', id: e.utr, name: `${e.automation_name}: ${e.subject}` });
  return uses;
}
