import type { AppDeps } from '../../deps.js';
import { compileMjml, DesignError, parseDesign } from '../../delivery/mjml.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, Rnf, type FieldErrors } from '../../http/errors.js';
import { Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { deleteDesign, findDesign, insertDesign, selectDesigns, updateDesignRow } from './designs.queries.js';
import { toDesign, type Design, type DesignInput, type DesignRow, type DesignUpdate } from './designs.schema.js';

/** The list source of the account's designs. */
export function listDesigns(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectDesigns(deps.database.db, userId),
    'id',
    (rows: DesignRow[]) => rows.map(toDesign),
  );
}

/** One design of the account; `Record not found` otherwise. */
export async function getDesign(deps: AppDeps, userId: number, rawId: unknown): Promise<Design> {
  const id = toId(rawId);
  const row = id ? await findDesign(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(Rnf);
  return toDesign(row);
}

/**
 * Checks and compiles a `template_json` as a send's own is checked (same parser, compiler and
 * texts, on the field `template_json`); the HTML, or null once the failure is in `rules`.
 */
async function compiled(json: string | undefined, rules: Rules): Promise<string | null> {
  if (json === undefined || rules.failed('template_json')) return null;
  try {
    return await compileMjml(parseDesign(json, 'template json'), 'template json');
  } catch (err) {
    if (!(err instanceof DesignError)) throw err;
    rules.add('template_json', err.message);
    return null;
  }
}

/** Saves a new design; returns its id. */
export async function createDesign(deps: AppDeps, userId: number, input: DesignInput, schemaFailures: FieldErrors): Promise<number> {
  const rules = new Rules(schemaFailures);
  const html = await compiled(input.template_json, rules);
  rules.done();
  return insertDesign(
    deps.database.db,
    { user_id: userId, name: input.name, template_json: input.template_json, html_code: html! },
    deps.clock.now(),
  );
}

/** Changes the name and/or the document of a design (what is not given stays). */
export async function updateDesign(deps: AppDeps, userId: number, input: DesignUpdate, schemaFailures: FieldErrors): Promise<void> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  if (!rules.failed('id') && !(await findDesign(db, userId, input.id))) throw new NotFound(Rnf);
  const html = await compiled(input.template_json, rules);
  rules.done();
  const values = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.template_json !== undefined ? { template_json: input.template_json, html_code: html! } : {}),
  };
  if (!(await updateDesignRow(db, userId, input.id, values, deps.clock.now()))) throw new NotFound(Rnf);
}

/** Copies a design of the account as `<name> (copy)`; returns the copy's id. */
export async function duplicateDesign(deps: AppDeps, userId: number, input: { id: number }, schemaFailures: FieldErrors): Promise<number> {
  const { db } = deps.database;
  new Rules(schemaFailures).done();
  const row = await findDesign(db, userId, input.id);
  if (!row) throw new NotFound(Rnf);
  // The name stays within its 255 characters: a long name loses its end, never the suffix.
  const name = `${row.name.slice(0, 255 - ' (copy)'.length)} (copy)`;
  return insertDesign(db, { user_id: userId, name, template_json: row.template_json, html_code: row.html_code }, deps.clock.now());
}

/** Deletes a design of the account. Sends made with it keep their own copy of its document. */
export async function removeDesign(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await deleteDesign(deps.database.db, userId, id))) throw new NotFound(Rnf);
}
