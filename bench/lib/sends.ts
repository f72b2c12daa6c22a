/**
 * What the send benchmarks share: a verified sender and an unsubscribe group inserted directly,
 * the design every send uses, creating a send through the API and waiting for it to complete.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/index.js';
import { isoMicros } from '../../src/util/time.js';
import type { BenchSink } from './sink.js';

/** The secret and public URL the servers and the baseline sign their links with. */
export const SEND_APP_SECRET = 'bench-send-secret';
export const SEND_PUBLIC_URL = 'https://mail.bench.example.com';

/** A newsletter-sized design (≈3 KiB of HTML) with the usual placeholders and three links (tracked: click tracking is on by default). */
export const DESIGN_HTML = `<html><head><title></title></head><body style="font-family:sans-serif">
<h1>Spring news for ((first_name))</h1>
<p>Dear ((first_name)) ((last_name)),</p>
${Array.from({ length: 8 }, (_, i) => `<p>Paragraph ${i + 1}: everything new in ((city)) this season, from our shop to your door at ((address_line1)). Read on for offers picked for you, and our events near you.</p>`).join('\n')}
<p><a href="https://shop.bench.example.com/spring">Shop the spring range</a> ·
<a href="https://blog.bench.example.com/events?city=((city))">Events near you</a> ·
<a href="https://bench.example.com/account">Your account</a></p>
<p>Yours, ((sender_name))</p>
</body></html>`;
export const SUBJECT = 'News for ((first_name))';
export const PREHEADER = 'What is new this spring';

/** Inserts a verified sender (as opening its link would make it) and an unsubscribe group. */
export async function seedSenderAndGroup(db: Db, userId: number): Promise<{ sender: number; group: number }> {
  const at = isoMicros(new Date());
  const sender = await db
    .insertInto('senders')
    .values({
      user_id: userId,
      from_name: 'Bench News',
      from_email: 'news@bench.example.com',
      reply_to_email: 'replies@bench.example.com',
      country_id: 101,
      state_id: null,
      city_id: null,
      zip_code: '10001',
      company_address: '1 Bench Street',
      company_address2: null,
      nickname: 'bench',
      is_verified: 1,
      utr: randomUUID(),
      send_at: null,
      deleted_at: null,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const group = await db
    .insertInto('unsubscribe_groups')
    .values({
      user_id: userId,
      rand_id: String(randomInt(1e9, 2e9)),
      group_name: 'Newsletter',
      description: 'News',
      is_display: 1,
      deleted_at: null,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { sender: sender.id, group: group.id };
}

/** The create form of an immediate send to every contact of `type`. */
export function sendForm(base: { sender: number; group: number }, type: number, name = 'Bench send') {
  return {
    template_id: 1,
    template_html: DESIGN_HTML,
    sender_id: base.sender,
    unsubscribe_group_id: base.group,
    single_send_name: name,
    subject: SUBJECT,
    preheader: PREHEADER,
    recipient_id: [`contacts_${type}`],
    schedule_type: 0,
  };
}

async function call(url: string, headers: Record<string, string>, method: 'GET' | 'POST', path: string, body?: unknown) {
  const r = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await r.json()) as { message?: unknown };
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** `POST /single/send/create`; returns the utr. */
export async function createSend(url: string, headers: Record<string, string>, form: Record<string, unknown>): Promise<string> {
  const r = await call(url, headers, 'POST', '/single/send/create', form);
  return (r.message as { utr: string }).utr;
}

/** The send as `GET /single-send/details` shows it. */
export async function sendDetails(
  url: string,
  headers: Record<string, string>,
  utr: string,
): Promise<Record<string, number | string | null>> {
  const r = await call(url, headers, 'GET', `/single-send/details?utr=${encodeURIComponent(utr)}`);
  return (r.message as { singleSend: Array<Record<string, number | string | null>> }).singleSend[0];
}

/**
 * Polls details every `everyMs` until the send shows status 3 and the sink has `expected`
 * messages; returns the last details. Throws after `timeoutMs`.
 */
export async function waitCompleted(
  url: string,
  headers: Record<string, string>,
  utr: string,
  sink: BenchSink,
  expected: number,
  opts: { everyMs?: number; timeoutMs?: number; onPoll?: (received: number) => void } = {},
): Promise<Record<string, number | string | null>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  for (;;) {
    const d = await sendDetails(url, headers, utr);
    const { messages } = await sink.total();
    opts.onPoll?.(messages);
    if (d.status === 3 && messages >= expected) return d;
    if (Date.now() > deadline) throw new Error(`send ${utr} not completed: status ${d.status}, sink ${messages}/${expected}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 150));
  }
}

/** The addresses `seedContacts` gives contacts numbered `from` … `from + n - 1`. */
export function seededEmails(from: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `contact${from + i}@bench.example.com`);
}
