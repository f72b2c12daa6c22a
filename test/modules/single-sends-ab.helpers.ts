import assert from 'node:assert/strict';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { upload } from './contacts-csv.helpers.js';
import { make } from '../helpers.js';
import { messagesOf, sendForm, type SendsContext } from './single-sends.helpers.js';

/** A mail client's User-Agent: a person's open or click. */
export const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
/** Apple Mail Privacy Protection's proxy: a machine's open. */
export const APPLE_PROXY = 'Mozilla/5.0';

/** A design with one tracked link. */
export const LINKED = '<html><body><p>Hello ((first_name))</p><p><a href="https://shop.example.com/spring">Shop</a></p></body></html>';

/** A new contact type holding `n` contacts `<prefix><i>@example.com` (one CSV upload); returns its id and the addresses. */
export async function audience(t: SendsContext, prefix: string, n: number): Promise<{ type: number; emails: string[] }> {
  const type = await make.contactType(t.a);
  const emails = Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
  if (n > 0) {
    const csv = ['email,first_name,last_name,country', ...emails.map((e, i) => `${e},P${i},Doe,101`)].join('\n');
    const r = await upload(t.a, type, csv);
    assert.equal(r.status, 200, r.text);
  }
  return { type, emails };
}

/** A create form of an A/B test: `subjects` are variants 1…, over `sendForm`'s defaults and `extra`. */
export function abForm(
  base: { sender: number; group: number; type: number },
  subjects: string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return sendForm(base, {
    subject: 'Subject A',
    ab_test: 1,
    ab_test_percent: 50,
    ab_winner_metric: 'opens',
    ab_wait_minutes: 60,
    variants: subjects.map((subject) => ({ subject })),
    ...extra,
  });
}

/** The send's messages with their variant, by address. */
export async function variantsOf(t: SendsContext, utr: string): Promise<Map<string, number | null>> {
  return new Map((await messagesOf(t, utr)).map((m) => [m.email_key, m.ab_variant]));
}

/** The messages of the test share of variant `index`. */
export async function shareOf(t: SendsContext, utr: string, index: number) {
  return (await messagesOf(t, utr)).filter((m) => m.ab_variant === index);
}

/** A pixel request of message `id`, with User-Agent `ua`. */
export async function open(t: SendsContext, id: number, ua: string): Promise<void> {
  const r = await t.app.inject({
    method: 'GET',
    url: `/t/open/${trackingLinks(t.config).openToken(id)}.gif`,
    headers: { 'user-agent': ua },
  });
  assert.equal(r.statusCode, 200);
}

/** A click of message `id` on its send's first tracked link; `ua` undefined: no User-Agent (a scanner). */
export async function click(t: SendsContext, id: number, ua: string | undefined): Promise<void> {
  const link = await t.database.db
    .selectFrom('mail_messages as m')
    .innerJoin('tracked_links as l', (j) => j.onRef('l.source_id', '=', 'm.single_send_id').on('l.source_table', '=', 'single_sends'))
    .select('l.id')
    .where('m.id', '=', id)
    .orderBy('l.id')
    .executeTakeFirstOrThrow();
  const path = new URL(trackingLinks(t.config).clickUrl(id, link.id)).pathname;
  const r = await t.app.inject({ method: 'GET', url: path, headers: { 'user-agent': ua } });
  assert.equal(r.statusCode, 302);
}

/** What each address received (subjects), for the given addresses. */
export function received(t: SendsContext, emails: readonly string[]): Map<string, string[]> {
  return new Map(emails.map((e) => [e, t.sink!.to(e).map((m) => m.subject)]));
}

/** Asserts that each address got exactly one mail, and returns the subject each got. */
export function exactlyOnce(t: SendsContext, emails: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [email, subjects] of received(t, emails)) {
    assert.equal(subjects.length, 1, `${email} got ${subjects.length} mails`);
    out.set(email, subjects[0]);
  }
  return out;
}
