import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { TransactionalTemplateTable, TransactionalTemplateVersionTable } from '../../db/types.js';
import { toCount } from '../../db/dialect.js';
import type { TemplateRow, VersionRow } from './templates.schema.js';

/** One template of the account, by its public id. */
export function findTemplate(db: Db, userId: number, publicId: string): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('transactional_templates')
    .selectAll()
    .where('user_id', '=', userId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

/** A page of the account's templates, newest first, after the template `beforeId` (exclusive). */
export function selectTemplatePage(db: Db, userId: number, limit: number, beforeId: number | null): Promise<TemplateRow[]> {
  let q = db.selectFrom('transactional_templates').selectAll().where('user_id', '=', userId);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** How many templates the account holds. */
export async function countTemplates(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('transactional_templates')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return toCount(row.n);
}

/** The versions of these templates of the account, oldest first; without their contents when `summary`. */
export async function selectVersions(db: Db, userId: number, templateIds: number[], summary = false): Promise<VersionRow[]> {
  if (templateIds.length === 0) return [];
  const q = db
    .selectFrom('transactional_template_versions')
    .where('user_id', '=', userId)
    .where('template_id', 'in', templateIds)
    .orderBy('id');
  if (!summary) return q.selectAll().execute();
  // The list leaves the contents out: up to a megabyte each, for up to 200 templates.
  const rows = await q
    .select([
      'id',
      'user_id',
      'template_id',
      'public_id',
      'name',
      'subject',
      'generate_plain_content',
      'editor',
      'active',
      'created_at',
      'updated_at',
    ])
    .execute();
  return rows.map((r) => ({ ...r, html_content: '', plain_content: '', test_data: null }));
}

/** One version of a template of the account. */
export function findVersion(db: Db, userId: number, templateId: number, publicId: string): Promise<VersionRow | undefined> {
  return db
    .selectFrom('transactional_template_versions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('template_id', '=', templateId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

/** How many versions a template holds. */
export async function countVersions(db: Db, templateId: number): Promise<number> {
  const row = await db
    .selectFrom('transactional_template_versions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('template_id', '=', templateId)
    .executeTakeFirstOrThrow();
  return toCount(row.n);
}

export async function insertTemplate(db: Db, values: Insertable<TransactionalTemplateTable>): Promise<TemplateRow> {
  return db.insertInto('transactional_templates').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Changes a template row (its name, its `updated_at`). */
export async function updateTemplateRow(db: Db, id: number, values: Updateable<TransactionalTemplateTable>): Promise<void> {
  await db.updateTable('transactional_templates').set(values).where('id', '=', id).execute();
}

/** Deletes a template of the account (its versions go with it); false when there was none. */
export async function deleteTemplateRow(db: Db, userId: number, id: number): Promise<boolean> {
  const res = await db.deleteFrom('transactional_templates').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function insertVersion(db: Db, values: Insertable<TransactionalTemplateVersionTable>): Promise<VersionRow> {
  return db.insertInto('transactional_template_versions').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Changes a version row. */
export async function updateVersionRow(db: Db, id: number, values: Updateable<TransactionalTemplateVersionTable>): Promise<VersionRow> {
  return db.updateTable('transactional_template_versions').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Makes every version of a template inactive (before one becomes active: at most one is). */
export async function deactivateVersions(db: Db, templateId: number): Promise<void> {
  await db
    .updateTable('transactional_template_versions')
    .set({ active: 0 })
    .where('template_id', '=', templateId)
    .where('active', '=', 1)
    .execute();
}

/** Deletes a version; false when there was none. */
export async function deleteVersionRow(db: Db, id: number): Promise<boolean> {
  const res = await db.deleteFrom('transactional_template_versions').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
