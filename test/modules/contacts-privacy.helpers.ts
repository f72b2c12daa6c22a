import assert from 'node:assert/strict';
import { hrefsOf } from './clicks.helpers.js';
import type { Client } from '../helpers.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import type { SendsContext } from './single-sends.helpers.js';

/** Opens a sent message (its pixel) and clicks its first tracked link, through the public routes. */
export async function openAndClick(t: SendsContext, messageId: number, address: string): Promise<void> {
  const links = trackingLinks(t.config);
  assert.equal((await t.anon.get(`/t/open/${links.openToken(messageId)}.gif`)).status, 200);
  const header = `<${await messageIdOf(t, messageId)}>`;
  const mail = t.sink!.to(address).find((m) => m.header('message-id') === header)!;
  const click = hrefsOf(mail.html!).find((h) => h.includes('/t/click/'))!;
  assert.ok(click, 'the mail has a tracked link');
  const r = await t.anon.get(new URL(click).pathname);
  assert.equal(r.status, 302);
}

async function messageIdOf(t: SendsContext, id: number): Promise<string | null> {
  const row = await t.database.db.selectFrom('mail_messages').select('message_id').where('id', '=', id).executeTakeFirstOrThrow();
  return row.message_id;
}

/** Unsubscribes the recipient of a message from its group with the one-click POST of its unsubscribe link. */
export async function oneClickUnsubscribe(t: SendsContext, messageId: number): Promise<void> {
  const token = trackingLinks(t.config).unsubscribeToken(messageId);
  const r = await t.anon.request('POST', `/u/${token}`, {
    payload: 'List-Unsubscribe=One-Click',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(r.status, 200, r.text);
}

/** The queue row of the account's message to `email` (lower case) of the send `utr`. */
export async function messageTo(t: SendsContext, utr: string, email: string) {
  const send = await t.database.db.selectFrom('single_sends').select('id').where('utr', '=', utr).executeTakeFirstOrThrow();
  return t.database.db
    .selectFrom('mail_messages')
    .selectAll()
    .where('single_send_id', '=', send.id)
    .where('email_key', '=', email.toLowerCase())
    .executeTakeFirstOrThrow();
}

/** Calls `path` and expects success. */
export async function ok(c: Client, method: 'GET' | 'POST', path: string, form: Record<string, unknown>) {
  const r = method === 'GET' ? await c.get(path, form) : await c.post(path, form);
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r;
}

/** A link in an HTML design, so that sends have a click to track. */
export const DESIGN = '<html><body><p>Hello ((first_name))</p><p><a href="https://shop.example.com/spring">Shop</a></p></body></html>';
