import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, setup, setupWithSink, type Client, type TestContext, assertNeedsKeys } from '../helpers.js';
import { SmtpSink, type SinkMessage } from '../support/smtp-sink.js';
import { allCities, allStates } from '../../src/modules/geo/geo.data.js';
import { findVerifiedSender } from '../../src/modules/senders/senders.queries.js';
import { senderFailure } from '../../src/modules/senders/senders.service.js';
import { createTokens } from '../../src/util/tokens.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SQL_TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const INDIA = 101;
const STATE = allStates().find((s) => s.country_id === INDIA && allCities().some((c) => c.state_id === s.id))!;
const CITY = allCities().find((c) => c.state_id === STATE.id)!;
const OTHER_STATE_CITY = allCities().find((c) => c.country_id === INDIA && c.state_id !== STATE.id)!;
const FOREIGN_STATE = allStates().find((s) => s.country_id !== INDIA)!;

let seq = 0;
const uniqueEmail = (tag = 's') => `${tag}.${process.pid}.${++seq}@example.com`;
const senderForm = (extra: Record<string, unknown> = {}) => ({
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
function linkIn(m: SinkMessage): string {
  const url = /http:\/\/localhost:3000(\/sender\/verify\?token=[A-Za-z0-9._%-]+)/.exec(m.text ?? '');
  assert.ok(url, 'the mail carries a verification link');
  assert.ok(m.html?.includes(url[0]), 'the html part carries the same link');
  return url[1];
}

describe('senders', () => {
  let t: TestContext;
  let sink: SmtpSink;
  before(async () => {
    ({ sink, ...t } = await setupWithSink());
  });
  after(() => t.close());

  /** Saves a sender and returns its id, form and the verification mail it got. */
  async function saveSender(c: Client = t.a, extra: Record<string, unknown> = {}) {
    const form = senderForm(extra);
    const r = await c.post('/sender/save', form);
    assert.equal(r.status, 200, r.text);
    const mail = await sink.waitFor((m) => m.envelope.to.includes(form.from_email));
    return { id: r.body.id as number, form, mail };
  }
  const details = async (id: number, c: Client = t.a) => (await c.get('/sender/details', { sender_id: id })).body.message?.sender;
  const open = (path: string) => t.app.inject({ method: 'GET', url: path });

  it('saves an unverified sender, returns its id and mails a verification link to from_email at once', async () => {
    const form = senderForm();
    const r = await t.a.post('/sender/save', form);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Added Successfully');
    const mail = await sink.waitFor((m) => m.envelope.to.includes(form.from_email));
    assert.equal(mail.subject, 'Verify your sender address');
    assert.equal(mail.header('from'), 'Campaign API <no-reply@localhost>');
    linkIn(mail);
    const s = await details(r.body.id);
    assert.deepEqual(Object.keys(s), [
      'id', 'user_id', 'from_name', 'from_email', 'reply_to_email', 'country_id', 'state_id', 'city_id', 'zip_code',
      'company_address', 'company_address2', 'nickname', 'is_verified', 'utr', 'send_at', 'created_at', 'updated_at', 'deleted_at',
    ]);
    assert.equal(s.user_id, t.a.keys!.user_id);
    assert.equal(s.from_email, form.from_email);
    assert.equal(s.state_id, STATE.id);
    assert.equal(s.city_id, CITY.id);
    assert.equal(s.is_verified, 0);
    assert.match(s.utr, /^[0-9a-f-]{36}$/);
    assert.ok(!mail.raw.includes(s.utr), 'the public utr is not the secret in the link');
    assert.match(s.send_at, SQL_TS);
    assert.match(s.created_at, TS);
    assert.equal(s.deleted_at, null);
  });

  it('stores optional fields as null when they are not given', async () => {
    const { state_id, city_id, zip_code, company_address2, ...required } = senderForm();
    const r = await t.a.post('/sender/save', required);
    assert.equal(r.status, 200);
    const s = await details(r.body.id);
    assert.deepEqual([s.state_id, s.city_id, s.zip_code, s.company_address2], [null, null, null, null]);
  });

  it('reports every missing required field together', async () => {
    const r = await t.a.post('/sender/save', { from_name: '  ' });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        from_name: ['The from name field is required.'],
        from_email: ['The from email field is required.'],
        reply_to_email: ['The reply to email field is required.'],
        country_id: ['The country id field is required.'],
        company_address: ['The company address field is required.'],
        nickname: ['The nickname field is required.'],
      }),
    );
  });

  it('rejects bad addresses, header line breaks and over-long company addresses', async () => {
    const long = 'x'.repeat(256);
    const r = await t.a.post('/sender/save', senderForm({
      from_email: 'not-an-email',
      reply_to_email: 'a@b.c\r\nBcc: victim@example.com',
      from_name: 'Evil\r\nBcc: victim@example.com',
      nickname: 'nick\nname',
      company_address: long,
      company_address2: long,
      country_id: 'abc',
    }));
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors.from_email, ['The from email must be a valid email address.']);
    assert.ok(r.body.errors.reply_to_email.includes('The reply to email format is invalid.'));
    assert.deepEqual(r.body.errors.from_name, ['The from name format is invalid.']);
    assert.deepEqual(r.body.errors.nickname, ['The nickname format is invalid.']);
    assert.deepEqual(r.body.errors.company_address, ['The company address must not be greater than 255 characters.']);
    assert.deepEqual(r.body.errors.company_address2, ['The company address2 must not be greater than 255 characters.']);
    assert.deepEqual(r.body.errors.country_id, ['The country id must be an integer.']);
  });

  it('checks that the country exists, the state is the country\'s and the city the state\'s', async () => {
    const unknown = await t.a.post('/sender/save', senderForm({ country_id: 999999 }));
    assert.deepEqual(unknown.body, fieldErrors({ country_id: ['The selected country id is invalid.'] }));
    const state = await t.a.post('/sender/save', senderForm({ state_id: FOREIGN_STATE.id, city_id: undefined }));
    assert.equal(state.status, 422);
    assert.deepEqual(state.body, fieldErrors({ state_id: ['The selected state id is invalid.'] }));
    const city = await t.a.post('/sender/save', senderForm({ city_id: OTHER_STATE_CITY.id }));
    assert.deepEqual(city.body, fieldErrors({ city_id: ['The selected city id is invalid.'] }));
    const both = await t.a.post('/sender/save', senderForm({ state_id: 999999999, city_id: 999999999, nickname: '' }));
    assert.deepEqual(both.body, fieldErrors({
      nickname: ['The nickname field is required.'],
      state_id: ['The selected state id is invalid.'],
      city_id: ['The selected city id is invalid.'],
    }));
    const cityWithoutState = await t.a.post('/sender/save', senderForm({ state_id: undefined, city_id: CITY.id }));
    assert.equal(cityWithoutState.status, 200, 'a city of the country is accepted without a state');
  });

  it('verifies the sender through the mailed link and shows an escaped HTML page', async () => {
    const { id, mail } = await saveSender(t.a, { from_name: '<script>alert(1)</script> & Co' });
    const res = await open(linkIn(mail));
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /Sender verified/);
    assert.ok(!res.body.includes('<script>alert(1)'), 'the name is escaped');
    assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co'));
    assert.equal((await details(id)).is_verified, 1);
    const again = await open(linkIn(mail));
    assert.equal(again.statusCode, 200, 'opening the link twice is harmless');
  });

  it('verifies nothing with a forged, altered, foreign-purpose or expired token', async () => {
    const { id, mail } = await saveSender();
    const path = linkIn(mail);
    const token = decodeURIComponent(path.split('token=')[1]);
    const [body, mac] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const [payload] = JSON.parse(Buffer.from(body, 'base64url').toString());
    const tokens = createTokens('test-secret');
    const bad = [
      'forged',
      '',
      `${flip(body, 3)}.${mac}`,
      `${body}.${flip(mac, 5)}`,
      `${body}.${flip(mac, mac.length - 1)}`,
      `${body}.${mac}.x`,
      createTokens('another-secret').sign('sender-verify', payload),
      tokens.sign('open-tracking', payload),
      tokens.sign('sender-verify', payload, { expiresInSeconds: -1 }),
      tokens.sign('sender-verify', { ...payload, s: payload.s + 1 }),
    ];
    for (const tok of bad) {
      const res = await open(`/sender/verify?token=${encodeURIComponent(tok)}`);
      assert.equal(res.statusCode === 400 || res.statusCode === 404, true, `${tok}: ${res.statusCode}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /invalid/i);
    }
    assert.equal((await open('/sender/verify')).statusCode, 400);
    assert.equal((await details(id)).is_verified, 0);
    assert.equal((await open(path)).statusCode, 200, 'the genuine link still works');
  });

  it('allows one verification mail per minute per sender, counting the one sent on save', async () => {
    const { id, form } = await saveSender();
    const soon = await t.a.get('/sender/resend-mail', { sender_id: id });
    assert.equal(soon.status, 429);
    assert.equal(soon.body.status, 'failed');
    assert.match(soon.body.errors, /^A verification mail was sent less than a minute ago\. Try again in \d+ seconds\.$/);
    const retry = Number(soon.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    // A minute later (moved back in the database rather than waited for):
    await t.database.db.updateTable('senders').set({ send_at: '2000-01-01 00:00:00' }).where('id', '=', id).execute();
    sink.clear();
    const r = await t.a.get('/sender/resend-mail', { sender_id: id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Verification Mail Send' });
    const mail = await sink.waitFor((m) => m.envelope.to.includes(form.from_email));
    assert.notEqual((await details(id)).send_at, '2000-01-01 00:00:00');
    assert.equal((await t.a.get('/sender/resend-mail', { sender_id: id })).status, 429);
    assert.equal((await open(linkIn(mail))).statusCode, 200);
  });

  it('resets verification and mails a new link when from_email changes; the old link stops working', async () => {
    const { id, form, mail } = await saveSender();
    assert.equal((await open(linkIn(mail))).statusCode, 200);
    const same = await t.a.post('/sender/update', { sender_id: id, ...form, from_name: 'Renamed', from_email: form.from_email.toUpperCase() });
    assert.deepEqual(same.body, { status: 'success', message: 'Updated Successfully' });
    assert.equal((await details(id)).is_verified, 1, 'same address (any case): still verified');
    const newEmail = uniqueEmail('moved');
    const r = await t.a.post('/sender/update', { sender_id: id, ...form, from_email: newEmail });
    assert.equal(r.status, 200);
    const s = await details(id);
    assert.equal(s.is_verified, 0);
    assert.equal(s.from_email, newEmail);
    assert.equal(s.from_name, 'Acme News');
    const fresh = await sink.waitFor((m) => m.envelope.to.includes(newEmail));
    const old = await open(linkIn(mail));
    assert.equal(old.statusCode, 404);
    assert.equal((await details(id)).is_verified, 0);
    assert.equal((await open(linkIn(fresh))).statusCode, 200);
    assert.equal((await details(id)).is_verified, 1);
  });

  it('mails the account\'s notification recipients when a sender is verified, once', async () => {
    const owner = uniqueEmail('owner');
    const otherOwner = uniqueEmail('other-owner');
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: owner, email_owner: 'Olga' })).status, 200);
    assert.equal((await t.b.post('/notification-recipient/save', { email_address: otherOwner, email_owner: 'Bob' })).status, 200);
    const { form, mail } = await saveSender();
    await open(linkIn(mail));
    const note = await sink.waitFor((m) => m.envelope.to.includes(owner));
    assert.equal(note.subject, '[Campaign API] Sender verified');
    assert.match(note.text!, /Hello Olga,/);
    assert.ok(note.text!.includes(`from_email: ${form.from_email}`));
    assert.ok(note.html!.includes(form.from_email));
    await open(linkIn(mail));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(sink.to(owner).length, 1, 'a second opening does not notify again');
    assert.equal(sink.to(otherOwner).length, 0, 'another account is not told');
  });

  it('lists the account\'s senders newest first, by GET and by POST, with paging', async () => {
    const first = (await saveSender()).id;
    const second = (await saveSender()).id;
    for (const method of ['GET', 'POST']) {
      const r = await t.a.request(method, '/senders');
      assert.equal(r.status, 200);
      const ids = r.body.message.senders.map((s: { id: number }) => s.id);
      assert.equal(ids[0], second);
      assert.ok(ids.includes(first));
      assert.deepEqual(ids, [...ids].sort((x: number, y: number) => y - x));
    }
    const paged = await t.a.get('/senders', { page: 1, per_page: 1 });
    assert.equal(paged.body.message.senders.length, 1);
    assert.equal(paged.body.message.meta.per_page, 1);
    const other = await t.b.get('/senders');
    assert.ok(other.body.message.senders.every((s: { user_id: number }) => s.user_id === t.b.keys!.user_id));
  });

  it('updates a sender; a missing sender_id is a field error, an unknown one Record Not Found', async () => {
    const { id, form } = await saveSender();
    const r = await t.a.post('/sender/update', { ...form, sender_id: id, nickname: 'renamed', zip_code: '' });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const s = await details(id);
    assert.equal(s.nickname, 'renamed');
    assert.equal(s.zip_code, null);
    const missing = await t.a.post('/sender/update', { ...form, nickname: '' });
    assert.deepEqual(missing.body, fieldErrors({ sender_id: ['The sender id field is required.'], nickname: ['The nickname field is required.'] }));
    const unknown = await t.a.post('/sender/update', { ...form, sender_id: 99999999 });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { status: 'failed', errors: 'Record Not Found' });
    const invalid = await t.a.post('/sender/update', { ...form, sender_id: id, reply_to_email: 'nope' });
    assert.deepEqual(invalid.body, fieldErrors({ reply_to_email: ['The reply to email must be a valid email address.'] }));
  });

  it('soft-deletes a sender with the success text in errors and message', async () => {
    const { id, mail } = await saveSender();
    const r = await t.a.delete('/sender/delete', { sender_id: id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', errors: 'Deleted Successfully', message: 'Deleted Successfully' });
    assert.equal((await t.a.get('/sender/details', { sender_id: id })).status, 404);
    const list = await t.a.get('/senders');
    assert.ok(!list.body.message.senders.some((s: { id: number }) => s.id === id));
    const again = await t.a.delete('/sender/delete', { sender_id: id });
    assert.deepEqual(again.body, { status: 'failed', errors: 'Record Not Found' });
    assert.equal((await open(linkIn(mail))).statusCode, 404, 'a deleted sender cannot be verified');
    const row = await t.database.db.selectFrom('senders').select(['deleted_at', 'is_verified']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.match(row.deleted_at!, TS);
    assert.equal(row.is_verified, 0);
  });

  it('answers Record Not Found for another account\'s sender and leaves it unchanged', async () => {
    const { id, form } = await saveSender(t.b);
    const before = await details(id, t.b);
    const rnf = { status: 'failed', errors: 'Record Not Found' };
    for (const r of [
      await t.a.get('/sender/details', { sender_id: id }),
      await t.a.post('/sender/update', { ...form, sender_id: id, from_email: uniqueEmail() }),
      await t.a.delete('/sender/delete', { sender_id: id }),
      await t.a.get('/sender/resend-mail', { sender_id: id }),
    ]) {
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, rnf);
    }
    assert.deepEqual(await details(id, t.b), before);
  });

  it('answers Record Not Found for a missing or malformed sender_id', async () => {
    for (const q of [{}, { sender_id: 'abc' }, { sender_id: '-1' }, { sender_id: '1e3' }, { sender_id: '99999999999' }]) {
      for (const path of ['/sender/details', '/sender/resend-mail']) {
        const r = await t.a.get(path, q);
        assert.equal(r.status, 404, `${path} ${JSON.stringify(q)}`);
        assert.deepEqual(r.body, { status: 'failed', errors: 'Record Not Found' });
      }
      assert.equal((await t.a.delete('/sender/delete', q)).status, 404);
    }
  });

  it('requires the API keys on every sender endpoint but not on the verification page', async () => {
    await assertNeedsKeys(t.anon, [['GET', '/senders']]);
    assert.equal((await t.anon.post('/sender/save', senderForm())).status, 401);
    assert.equal((await open('/sender/verify?token=x')).statusCode, 400);
  });

  it('lets only verified senders of the account be used (rule for single sends and automations)', async () => {
    const { id, mail } = await saveSender();
    const { id: foreign } = await saveSender(t.b);
    const userId = t.a.keys!.user_id;
    const db = t.database.db;
    assert.equal(await senderFailure(db, userId, id), 'The selected sender id is not verified.');
    assert.equal(await findVerifiedSender(db, userId, id), undefined);
    await open(linkIn(mail));
    assert.equal(await senderFailure(db, userId, id), null);
    assert.equal((await findVerifiedSender(db, userId, id))?.id, id);
    assert.equal(await senderFailure(db, userId, foreign), 'The selected sender id is invalid.');
  });
});
