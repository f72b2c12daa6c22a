import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { drainQueue, setupWithSink, type Client, type TestContext } from '../helpers.js';
import type { SmtpSink, SinkMessage } from '../support/smtp-sink.js';
import { allCities, allStates } from '../../src/reference/geo.js';

export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const SQL_TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const INDIA = 101;
export const STATE = allStates().find((s) => s.country_id === INDIA && allCities().some((c) => c.state_id === s.id))!;
export const CITY = allCities().find((c) => c.state_id === STATE.id)!;
export const OTHER_STATE_CITY = allCities().find((c) => c.country_id === INDIA && c.state_id !== STATE.id)!;
export const FOREIGN_STATE = allStates().find((s) => s.country_id !== INDIA)!;

let seq = 0;
export const uniqueEmail = (tag = 's') => `${tag}.${process.pid}.${++seq}@example.com`;
export const senderForm = (extra: Record<string, unknown> = {}) => ({
  from_name: 'Acme News',
  from_email: uniqueEmail(),
  reply_to_email: 'replies@example.com',
  country_id: INDIA,
  state_id: STATE.id,
  city_id: CITY.id,
  zip_code: '400001',
  company_address: '1 Main Street',
  company_address2: 'Floor 2',
  nickname: 'acme',
  ...extra,
});

/** The verification link in a mail, as a path for app.inject. */
export function linkIn(m: SinkMessage): string {
  const url = /http:\/\/localhost:3000(\/sender\/verify\?token=[A-Za-z0-9._%-]+)/.exec(m.text ?? '');
  assert.ok(url, 'the mail carries a verification link');
  assert.ok(m.html?.includes(url[0]), 'the html part carries the same link');
  return url[1];
}

/**
 * Registers the suite's app with an SMTP sink (closed after the suite) and returns it with
 * `saveSender` (saves a sender and returns its id, form and the verification mail it got),
 * `drain` (runs the mail queue),
 * `details` (a sender as details shows it) and `open` (a public page by path).
 */
export function sendersSuite() {
  let t: TestContext;
  let sink: SmtpSink;
  before(async () => {
    ({ sink, ...t } = await setupWithSink());
  });
  after(() => t.close());
  return {
    get t() {
      return t;
    },
    get sink() {
      return sink;
    },
    async saveSender(c: Client = t.a, extra: Record<string, unknown> = {}) {
      const form = senderForm(extra);
      const r = await c.post('/sender/save', form);
      assert.equal(r.status, 200, r.text);
      await drainQueue(t);
      const mail = await sink.waitFor((m) => m.envelope.to.includes(form.from_email));
      return { id: r.body.id as number, form, mail };
    },
    /** Runs the mail queue until nothing is due (the verification and notification mails go through it). */
    drain: () => drainQueue(t),
    details: async (id: number, c: Client = t.a) => (await c.get('/sender/details', { sender_id: id })).body.message?.sender,
    open: (path: string) => t.app.inject({ method: 'GET', url: path }),
  };
}
