import assert from 'node:assert/strict';
import type { Client } from '../helpers.js';
import { createSegment } from './segments.helpers.js';
import { group, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

export { Rnf, setupSends as setupAutomations, SQL_TS, TS, UUID, type SendsContext as AutomationsContext } from './single-sends.helpers.js';

export const RNF = { status: 'failed', errors: 'Record Not Found' };
export const failedText = (errors: string) => ({ status: 'failed', errors });

/** What an account needs before its automations: a verified sender, an unsubscribe group, a contact type (with a contact) and a segment. */
export interface AutomationBase {
  sender: number;
  group: number;
  type: number;
  segment: number;
}

/** Creates the prerequisites of automations for account `c`. */
export async function automationBase(t: SendsContext, c: Client): Promise<AutomationBase> {
  const { type } = await typeWith(c, [[`first.${c.keys!.user_id}@example.com`]]);
  const segment = await createSegment(c, { contact_type_id: type, select_field: ['email'], select_operator: ['contains'], value: ['@'] });
  return { sender: await verifiedSender(t, c), group: await group(c), type, segment };
}

/** What a valid create needs, over `extra`. */
export function automationForm(base: AutomationBase, extra: Record<string, unknown> = {}) {
  return {
    type: 'welcome',
    automation_for: `contacts_${base.type}`,
    automation_name: 'Welcome series',
    unsubscribe_group_id: base.group,
    ...extra,
  };
}

/** Creates an automation; returns its utr. */
export async function createAutomation(c: Client, form: Record<string, unknown>): Promise<string> {
  const r = await c.post('/automations/create', form);
  assert.equal(r.status, 200, r.text);
  return r.body.message.utr;
}

/** What a valid schedule create needs for the automation `utr`, over `extra`. */
export function scheduleForm(base: AutomationBase, utr: string, extra: Record<string, unknown> = {}) {
  return {
    utr,
    sender_id: base.sender,
    subject: 'Welcome, ((first_name))',
    waiting_period: 1,
    waiting_type: 'instantly',
    template_id: 1,
    preview_img: 'blank.png',
    template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
    ...extra,
  };
}

/** Adds an email to an automation; returns its id and utr. */
export async function addSchedule(c: Client, form: Record<string, unknown>): Promise<{ id: number; utr: string }> {
  const r = await c.post('/automations/schedule/create', form);
  assert.equal(r.status, 200, r.text);
  return { id: r.body.id, utr: r.body.utr };
}

/** A new automation of account `c` with `n` emails (subjects `Email 1`, `Email 2`, …); returns its utr. */
export async function automationWithEmails(
  c: Client,
  base: AutomationBase,
  n: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const utr = await createAutomation(c, automationForm(base, extra));
  for (let i = 1; i <= n; i++) await addSchedule(c, scheduleForm(base, utr, { subject: `Email ${i}` }));
  return utr;
}

/** The automation as details shows it. */
export async function automationDetails(c: Client, utr: string): Promise<Record<string, any>> {
  const r = await c.get('/automations/details', { utr });
  assert.equal(r.status, 200, r.text);
  return r.body.message.automation;
}

/** The automation's emails as the schedule list shows them. */
export async function schedulesOf(c: Client, utr: string): Promise<Array<Record<string, any>>> {
  const r = await c.get('/automations/schedule', { utr });
  assert.equal(r.status, 200, r.text);
  return r.body.message.automation_schedules;
}

/** The stored row of an automation. */
export function automationRow(t: SendsContext, utr: string) {
  return t.database.db.selectFrom('automations').selectAll().where('utr', '=', utr).executeTakeFirstOrThrow();
}

/** The event notes (system mails) queued for the account of `c`, as their `X-Campaign-Event` headers. */
export async function queuedEvents(t: SendsContext, c: Client): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('mail_messages')
    .select('payload')
    .where('user_id', '=', c.keys!.user_id)
    .where('kind', '=', 'system')
    .orderBy('id')
    .execute();
  return rows.map((r) => JSON.parse(r.payload!).headers?.['X-Campaign-Event']).filter(Boolean);
}
