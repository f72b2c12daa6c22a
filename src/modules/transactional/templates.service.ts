import { randomBytes, randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { templateProblem } from '../../delivery/handlebars.js';
import { AppError, NotFound, ValidationError } from '../../http/errors.js';
import { isoMicros } from '../../util/time.js';
import {
  countTemplates,
  countVersions,
  deactivateVersions,
  deleteTemplateRow,
  deleteVersionRow,
  findTemplate,
  findVersion,
  insertTemplate,
  insertVersion,
  selectTemplatePage,
  selectVersions,
  updateTemplateRow,
  updateVersionRow,
} from './templates.queries.js';
import { toTemplate, toVersion, type TemplateRow, type TemplateShape, type VersionInput, type VersionShape } from './templates.schema.js';

/** At most this many templates per account, and versions per template (SendGrid's limits). */
export const MAX_TEMPLATES = 300;
export const MAX_VERSIONS = 300;
const DEFAULT_PAGE_SIZE = 10;

/** The template of the account with this id, or SendGrid's 404. */
async function templateOf(deps: AppDeps, userId: number, publicId: string): Promise<TemplateRow> {
  const row = await findTemplate(deps.database.db, userId, publicId);
  if (!row) throw new NotFound();
  return row;
}

/** Creates an empty dynamic template. */
export async function createTemplate(deps: AppDeps, userId: number, input: { name: string }): Promise<TemplateShape> {
  const { db } = deps.database;
  if ((await countTemplates(db, userId)) >= MAX_TEMPLATES) throw new AppError(400, `An account holds at most ${MAX_TEMPLATES} templates.`);
  const at = isoMicros(deps.clock.now());
  const row = await insertTemplate(db, {
    user_id: userId,
    public_id: 'd-' + randomBytes(16).toString('hex'),
    name: input.name,
    created_at: at,
    updated_at: at,
  });
  return toTemplate(row, []);
}

/** The token of the page after the template `id`: opaque to clients. */
const pageToken = (id: number) => Buffer.from(`t${id}`).toString('base64url');
function idOfToken(token: string): number {
  const m = /^t([1-9]\d{0,15})$/.exec(Buffer.from(token, 'base64url').toString());
  if (!m) throw new ValidationError({ page_token: ['The page token is invalid.'] });
  return Number(m[1]);
}

/**
 * A page of the account's templates, newest first, with their versions (without contents), and
 * SendGrid's `_metadata`: `self`, `next` (while more follow) and `count`. Only dynamic templates
 * exist, so `generations=legacy` lists none.
 */
export async function listTemplates(
  deps: AppDeps,
  userId: number,
  query: { generations?: string; page_size?: number; page_token?: string },
) {
  const generations = (query.generations ?? 'dynamic').split(',').map((g) => g.trim());
  if (generations.some((g) => g !== 'dynamic' && g !== 'legacy')) {
    throw new ValidationError({ generations: ['The generations must be legacy, dynamic or legacy,dynamic.'] });
  }
  const size = query.page_size ?? DEFAULT_PAGE_SIZE;
  const before = query.page_token ? idOfToken(query.page_token) : null;
  const base = `${deps.config.publicUrl}/v3/templates?generations=${generations.join(',')}&page_size=${size}`;
  const self = query.page_token ? `${base}&page_token=${query.page_token}` : base;
  if (!generations.includes('dynamic')) return { result: [], _metadata: { self, count: 0 } };
  const { db } = deps.database;
  const rows = await selectTemplatePage(db, userId, size + 1, before);
  const page = rows.slice(0, size);
  const versions = await selectVersions(
    db,
    userId,
    page.map((r) => r.id),
    true,
  );
  const result = page.map((r) =>
    toTemplate(
      r,
      versions.filter((v) => v.template_id === r.id),
    ),
  );
  const next = rows.length > size ? `${base}&page_token=${pageToken(page[page.length - 1].id)}` : undefined;
  return { result, _metadata: { self, ...(next ? { next } : {}), count: await countTemplates(db, userId) } };
}

/** One template of the account with its versions. */
export async function getTemplate(deps: AppDeps, userId: number, publicId: string): Promise<TemplateShape> {
  const row = await templateOf(deps, userId, publicId);
  return toTemplate(row, await selectVersions(deps.database.db, userId, [row.id]));
}

/** Renames a template. */
export async function updateTemplate(deps: AppDeps, userId: number, publicId: string, input: { name?: string }): Promise<TemplateShape> {
  const row = await templateOf(deps, userId, publicId);
  const changed = { ...(input.name !== undefined ? { name: input.name } : {}), updated_at: isoMicros(deps.clock.now()) };
  await updateTemplateRow(deps.database.db, row.id, changed);
  return toTemplate({ ...row, ...changed }, await selectVersions(deps.database.db, userId, [row.id]));
}

/** Deletes a template and its versions. */
export async function deleteTemplate(deps: AppDeps, userId: number, publicId: string): Promise<void> {
  const row = await templateOf(deps, userId, publicId);
  if (!(await deleteTemplateRow(deps.database.db, userId, row.id))) throw new NotFound();
}

/** Refuses a version whose subject, HTML or text is not a template Handlebars compiles (400 naming each), or whose test data is not JSON. */
function checkVersion(input: VersionInput): void {
  const errors: Record<string, string[]> = {};
  for (const field of ['subject', 'html_content', 'plain_content'] as const) {
    const source = input[field];
    const problem = source === undefined ? null : templateProblem(source);
    if (problem) errors[field] = [problem];
  }
  if (input.test_data !== undefined) {
    try {
      JSON.parse(input.test_data);
    } catch {
      errors.test_data = ['The test data must be JSON.'];
    }
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/**
 * Adds a version. It becomes the active one (the others inactive) when `active` is 1, or when it is
 * the template's first version, as SendGrid does.
 */
export async function createVersion(
  deps: AppDeps,
  userId: number,
  publicId: string,
  input: VersionInput & { name: string; subject: string },
): Promise<VersionShape> {
  checkVersion(input);
  const template = await templateOf(deps, userId, publicId);
  const at = isoMicros(deps.clock.now());
  const row = await deps.database.db.transaction().execute(async (trx) => {
    // Written first: it holds the template's row (PostgreSQL) or the database (SQLite) until the
    // commit, so two versions made active at once cannot both be.
    await updateTemplateRow(trx, template.id, { updated_at: at });
    const count = await countVersions(trx, template.id);
    if (count >= MAX_VERSIONS) throw new AppError(400, `A template holds at most ${MAX_VERSIONS} versions.`);
    const active = input.active === 1 || count === 0;
    if (active) await deactivateVersions(trx, template.id);
    return insertVersion(trx, {
      user_id: userId,
      template_id: template.id,
      public_id: randomUUID(),
      name: input.name,
      subject: input.subject,
      html_content: input.html_content ?? '',
      plain_content: input.plain_content ?? '',
      generate_plain_content: input.generate_plain_content === false ? 0 : 1,
      editor: input.editor ?? 'code',
      test_data: input.test_data ?? null,
      active: active ? 1 : 0,
      created_at: at,
      updated_at: at,
    });
  });
  return toVersion(row, template.public_id);
}

/** The template and one of its versions, or SendGrid's 404. */
async function versionOf(deps: AppDeps, userId: number, templateId: string, versionId: string) {
  const template = await templateOf(deps, userId, templateId);
  const version = await findVersion(deps.database.db, userId, template.id, versionId);
  if (!version) throw new NotFound();
  return { template, version };
}

/** One version of a template of the account. */
export async function getVersion(deps: AppDeps, userId: number, templateId: string, versionId: string): Promise<VersionShape> {
  const { template, version } = await versionOf(deps, userId, templateId, versionId);
  return toVersion(version, template.public_id);
}

/** Changes a version (what is not given stays); `active: 1` makes it the active one, `active: 0` leaves the template without one. */
export async function updateVersion(
  deps: AppDeps,
  userId: number,
  templateId: string,
  versionId: string,
  input: VersionInput,
): Promise<VersionShape> {
  checkVersion(input);
  const { template, version } = await versionOf(deps, userId, templateId, versionId);
  const at = isoMicros(deps.clock.now());
  const row = await deps.database.db.transaction().execute(async (trx) => {
    await updateTemplateRow(trx, template.id, { updated_at: at });
    if (input.active === 1) await deactivateVersions(trx, template.id);
    const { template_id: _ignored, generate_plain_content, ...fields } = input;
    return updateVersionRow(trx, version.id, {
      ...fields,
      ...(generate_plain_content !== undefined ? { generate_plain_content: generate_plain_content ? 1 : 0 } : {}),
      updated_at: at,
    });
  });
  return toVersion(row, template.public_id);
}

/** Makes a version the template's active one. */
export async function activateVersion(deps: AppDeps, userId: number, templateId: string, versionId: string): Promise<VersionShape> {
  return updateVersion(deps, userId, templateId, versionId, { active: 1 });
}

/** Deletes a version (the template is then without an active version if it was the one). */
export async function deleteVersion(deps: AppDeps, userId: number, templateId: string, versionId: string): Promise<void> {
  const { template, version } = await versionOf(deps, userId, templateId, versionId);
  await deps.database.db.transaction().execute(async (trx) => {
    await updateTemplateRow(trx, template.id, { updated_at: isoMicros(deps.clock.now()) });
    await deleteVersionRow(trx, version.id);
  });
}
