import assert from 'node:assert/strict';
import type { Client } from '../../helpers.js';
import { isoMicros } from '../../../src/util/time.js';
import type { SendsContext } from '../single-sends.helpers.js';

export const DAY = 86_400_000;

/** A person's browser, as the open pixel and the click redirect see one. */
export const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

/** One message of the account's history, seeded by SQL (times relative to the test clock). */
export interface SeededMessage {
  userId: number;
  email: string;
  /** `single_send` (default), `automation`, or another kind (`test`, `system`). */
  kind?: string;
  sendId?: number | null;
  /** `sent` (default), `bounced`, `queued`, … */
  state?: string;
  /** How long before now it was delivered (ms); default one day. */
  sentAgo?: number;
  /** How long before now a person last opened it (ms); none when absent. */
  openedAgo?: number;
  /** How long before now a person last clicked it (ms); none when absent. */
  clickedAgo?: number;
  /** Machine opens only: counted, but no person's open. */
  machineOpens?: number;
}

/** Inserts one message as the queue and the ledger leave it; returns its id. */
export async function seedMessage(t: SendsContext, m: SeededMessage): Promise<number> {
  const now = t.clock.now().getTime();
  const ago = (ms: number | undefined) => (ms === undefined ? null : isoMicros(new Date(now - ms)));
  const sentAt = ago(m.sentAgo ?? DAY)!;
  const state = m.state ?? 'sent';
  const row = await t.database.db
    .insertInto('mail_messages')
    .values({
      user_id: m.userId,
      kind: m.kind ?? 'single_send',
      single_send_id: m.sendId ?? null,
      contact_id: null,
      email: m.email,
      email_key: m.email.toLowerCase(),
      state: state as never,
      next_attempt_at: sentAt,
      sent_at: state === 'sent' || state === 'bounced' ? sentAt : null,
      bounce_type: state === 'bounced' ? 'hard' : null,
      opens: (m.openedAgo === undefined ? 0 : 1) + (m.machineOpens ?? 0),
      machine_opens: m.machineOpens ?? 0,
      clicks: m.clickedAgo === undefined ? 0 : 1,
      last_human_opened_at: ago(m.openedAgo),
      last_human_clicked_at: ago(m.clickedAgo),
      created_at: sentAt,
      updated_at: sentAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** A condition as the three arrays carry it. */
export type Cond = [field: string, op: string, ...values: string[]];

/** A definition's form fields (the condition arrays, and `query_type` when given). */
export function definition(contactTypeId: number, conds: Cond[], queryType?: string) {
  return {
    contact_type_id: contactTypeId,
    select_field: conds.map((c) => c[0]),
    select_operator: conds.map((c) => c[1]),
    value: conds.flatMap((c) => c.slice(2)),
    ...(queryType ? { query_type: queryType } : {}),
  };
}

/** The addresses a definition matches, as a saved segment's recipient list shows them (sorted). */
export async function membersOf(c: Client, segmentId: number): Promise<string[]> {
  const r = await c.get('/segment/email/list', { segment_id: segmentId });
  assert.equal(r.status, 200, r.text);
  return (r.body.message.contactEmails as Array<{ email: string }>).map((m) => m.email).sort();
}

/** The segment's `segment_emails_count` in the segment list. */
export async function countInList(c: Client, segmentId: number): Promise<number> {
  const r = await c.get('/segment/list');
  assert.equal(r.status, 200, r.text);
  return (r.body.message.segments as Array<{ id: number; segment_emails_count: number }>).find((s) => s.id === segmentId)!
    .segment_emails_count;
}

/** What `POST /segment/count` answers for a definition. */
export async function countOf(c: Client, form: Record<string, unknown>): Promise<number> {
  const r = await c.post('/segment/count', form);
  assert.equal(r.status, 200, r.text);
  return r.body.message.count;
}
