import assert from 'node:assert/strict';
import { testClock, type TestClock } from '../../src/util/clock.js';
import { Client, make, setup, type TestContext } from '../helpers.js';
import { senderForm } from './senders.helpers.js';

export const Rnf = { status: 'failed', errors: 'Record not found' };
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const SQL_TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The app of the single-send suites: `setup`'s context, with its test clock. */
export type SendsContext = TestContext & { clock: TestClock };

/**
 * `setup` for the single-send suites: the clock at `start`, PUBLIC_URL https://mail.example.test;
 * with `sink`, mail goes to a real SMTP server; `env` adds environment variables (e.g. TRUST_PROXY).
 */
export async function setupSends(opts: { start?: string; sink?: boolean; env?: Record<string, string> } = {}): Promise<SendsContext> {
  const clock = testClock(opts.start ?? '2030-01-15T10:00:00.000Z');
  const env = { PUBLIC_URL: 'https://mail.example.test', ...opts.env };
  return { ...(await setup({}, { env, clock, sink: opts.sink })), clock };
}

/** Saves a sender and marks it verified (as opening its mailed link does); returns its id. */
export async function verifiedSender(t: SendsContext, c: Client, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await c.post('/sender/save', senderForm(extra));
  assert.equal(r.status, 200, r.text);
  await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', r.body.id).execute();
  return r.body.id;
}

/** Saves an unsubscribe group; returns its id. */
export async function group(c: Client, name = 'Newsletter'): Promise<number> {
  const r = await c.post('/unsubscribes-groups/save', { group_name: name, description: 'News', is_display: 1 });
  assert.equal(r.status, 200, r.text);
  return r.body.id;
}

/** A contact type with the given contacts (`[email, first_name]`); returns the type id and contact ids. */
export async function typeWith(c: Client, people: Array<[string, string?]>): Promise<{ type: number; ids: number[] }> {
  const type = await make.contactType(c);
  const ids: number[] = [];
  for (const [email, first_name = 'Ada'] of people) ids.push(await make.contact(c, { contact_type_id: type, email, first_name }));
  return { type, ids };
}

/** What a valid create needs, over `extra`. */
export function sendForm(base: { sender: number; group: number; type: number }, extra: Record<string, unknown> = {}) {
  return {
    template_id: 1,
    template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
    sender_id: base.sender,
    unsubscribe_group_id: base.group,
    single_send_name: 'Spring news',
    subject: 'News for ((first_name))',
    preheader: 'What is new this spring',
    recipient_id: [`contacts_${base.type}`],
    schedule_type: 0,
    ...extra,
  };
}

/** Creates a send; returns its utr. */
export async function createSend(c: Client, form: Record<string, unknown>): Promise<string> {
  const r = await c.post('/single/send/create', form);
  assert.equal(r.status, 200, r.text);
  return r.body.message.utr;
}

/** The send as details shows it. */
export async function details(c: Client, utr: string): Promise<Record<string, any>> {
  const r = await c.get('/single-send/details', { utr });
  assert.equal(r.status, 200, r.text);
  return r.body.message.singleSend[0];
}

/** The stored row of a send. */
export function sendRow(t: SendsContext, utr: string) {
  return t.database.db.selectFrom('single_sends').selectAll().where('utr', '=', utr).executeTakeFirstOrThrow();
}

/** The queued messages of a send, by address. */
export async function messagesOf(t: SendsContext, utr: string) {
  const row = await sendRow(t, utr);
  return t.database.db.selectFrom('mail_messages').selectAll().where('single_send_id', '=', row.id).orderBy('email_key').execute();
}
