import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, assertNeedsKeys } from '../helpers.js';
import { findVerifiedSender } from '../../src/modules/senders/senders.queries.js';
import { senderFailure } from '../../src/modules/senders/senders.service.js';
import {
  TS,
  SQL_TS,
  STATE,
  CITY,
  OTHER_STATE_CITY,
  FOREIGN_STATE,
  uniqueEmail,
  senderForm,
  linkIn,
  sendersSuite,
} from './senders.helpers.js';

describe('senders', () => {
  const suite = sendersSuite();
  const { saveSender, details, open } = suite;

  it('saves an unverified sender, returns its id and mails a verification link to from_email at once', async () => {
    const form = senderForm();
    const r = await suite.t.a.post('/sender/save', form);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Added Successfully');
    await suite.drain();
    const mail = await suite.sink.waitFor((m) => m.envelope.to.includes(form.from_email));
    assert.equal(mail.subject, 'Verify your sender address');
    assert.equal(mail.header('from'), 'Campaign API <no-reply@localhost>');
    linkIn(mail);
    const s = await details(r.body.id);
    assert.deepEqual(Object.keys(s), [
      'id',
      'user_id',
      'from_name',
      'from_email',
      'reply_to_email',
      'country_id',
      'state_id',
      'city_id',
      'zip_code',
      'company_address',
      'company_address2',
      'nickname',
      'is_verified',
      'utr',
      'send_at',
      'created_at',
      'updated_at',
      'deleted_at',
    ]);
    assert.equal(s.user_id, suite.t.a.keys!.user_id);
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
    const r = await suite.t.a.post('/sender/save', required);
    assert.equal(r.status, 200);
    const s = await details(r.body.id);
    assert.deepEqual([s.state_id, s.city_id, s.zip_code, s.company_address2], [null, null, null, null]);
  });

  it('reports every missing required field together', async () => {
    const r = await suite.t.a.post('/sender/save', { from_name: '  ' });
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
    const r = await suite.t.a.post(
      '/sender/save',
      senderForm({
        from_email: 'not-an-email',
        reply_to_email: 'a@b.c\r\nBcc: victim@example.com',
        from_name: 'Evil\r\nBcc: victim@example.com',
        nickname: 'nick\nname',
        company_address: long,
        company_address2: long,
        country_id: 'abc',
      }),
    );
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors.from_email, ['The from email must be a valid email address.']);
    assert.ok(r.body.errors.reply_to_email.includes('The reply to email format is invalid.'));
    assert.deepEqual(r.body.errors.from_name, ['The from name format is invalid.']);
    assert.deepEqual(r.body.errors.nickname, ['The nickname format is invalid.']);
    assert.deepEqual(r.body.errors.company_address, ['The company address must not be greater than 255 characters.']);
    assert.deepEqual(r.body.errors.company_address2, ['The company address2 must not be greater than 255 characters.']);
    assert.deepEqual(r.body.errors.country_id, ['The country id must be an integer.']);
  });

  it("checks that the country exists, the state is the country's and the city the state's", async () => {
    const unknown = await suite.t.a.post('/sender/save', senderForm({ country_id: 999999 }));
    assert.deepEqual(unknown.body, fieldErrors({ country_id: ['The selected country id is invalid.'] }));
    const state = await suite.t.a.post('/sender/save', senderForm({ state_id: FOREIGN_STATE.id, city_id: undefined }));
    assert.equal(state.status, 422);
    assert.deepEqual(state.body, fieldErrors({ state_id: ['The selected state id is invalid.'] }));
    const city = await suite.t.a.post('/sender/save', senderForm({ city_id: OTHER_STATE_CITY.id }));
    assert.deepEqual(city.body, fieldErrors({ city_id: ['The selected city id is invalid.'] }));
    const both = await suite.t.a.post('/sender/save', senderForm({ state_id: 999999999, city_id: 999999999, nickname: '' }));
    assert.deepEqual(
      both.body,
      fieldErrors({
        nickname: ['The nickname field is required.'],
        state_id: ['The selected state id is invalid.'],
        city_id: ['The selected city id is invalid.'],
      }),
    );
    const cityWithoutState = await suite.t.a.post('/sender/save', senderForm({ state_id: undefined, city_id: CITY.id }));
    assert.equal(cityWithoutState.status, 200, 'a city of the country is accepted without a state');
  });

  it("lists the account's senders newest first, by GET and by POST, with paging", async () => {
    // The first without its optional fields, so the list holds null values too.
    const sparse = { state_id: undefined, city_id: undefined, zip_code: undefined, company_address2: undefined };
    const first = (await saveSender(suite.t.a, sparse)).id;
    const second = (await saveSender()).id;
    for (const method of ['GET', 'POST']) {
      const r = await suite.t.a.request(method, '/senders');
      assert.equal(r.status, 200);
      const ids = r.body.message.senders.map((s: { id: number }) => s.id);
      assert.equal(ids[0], second);
      assert.ok(ids.includes(first));
      assert.deepEqual(
        ids,
        [...ids].sort((x: number, y: number) => y - x),
      );
    }
    const paged = await suite.t.a.get('/senders', { page: 1, per_page: 1 });
    assert.equal(paged.body.message.senders.length, 1);
    assert.equal(paged.body.message.meta.per_page, 1);
    // A page is serialised through the route's response schema, the whole list is streamed: same records.
    const whole = (await suite.t.a.get('/senders')).body.message.senders;
    assert.equal(whole.find((s: { id: number }) => s.id === first).zip_code, null);
    assert.deepEqual((await suite.t.a.get('/senders', { per_page: 1000 })).body.message.senders, whole);
    const other = await suite.t.b.get('/senders');
    assert.ok(other.body.message.senders.every((s: { user_id: number }) => s.user_id === suite.t.b.keys!.user_id));
  });

  it('updates a sender; a missing sender_id is a field error, an unknown one Record Not Found', async () => {
    const { id, form } = await saveSender();
    const r = await suite.t.a.post('/sender/update', { ...form, sender_id: id, nickname: 'renamed', zip_code: '' });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const s = await details(id);
    assert.equal(s.nickname, 'renamed');
    assert.equal(s.zip_code, null);
    const missing = await suite.t.a.post('/sender/update', { ...form, nickname: '' });
    assert.deepEqual(
      missing.body,
      fieldErrors({ sender_id: ['The sender id field is required.'], nickname: ['The nickname field is required.'] }),
    );
    const unknown = await suite.t.a.post('/sender/update', { ...form, sender_id: 99999999 });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { status: 'failed', errors: 'Record Not Found' });
    const invalid = await suite.t.a.post('/sender/update', { ...form, sender_id: id, reply_to_email: 'nope' });
    assert.deepEqual(invalid.body, fieldErrors({ reply_to_email: ['The reply to email must be a valid email address.'] }));
  });

  it('soft-deletes a sender with the success text in errors and message', async () => {
    const { id, mail } = await saveSender();
    const r = await suite.t.a.delete('/sender/delete', { sender_id: id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', errors: 'Deleted Successfully', message: 'Deleted Successfully' });
    assert.equal((await suite.t.a.get('/sender/details', { sender_id: id })).status, 404);
    const list = await suite.t.a.get('/senders');
    assert.ok(!list.body.message.senders.some((s: { id: number }) => s.id === id));
    const again = await suite.t.a.delete('/sender/delete', { sender_id: id });
    assert.deepEqual(again.body, { status: 'failed', errors: 'Record Not Found' });
    assert.equal((await open(linkIn(mail))).statusCode, 404, 'a deleted sender cannot be verified');
    const row = await suite.t.database.db
      .selectFrom('senders')
      .select(['deleted_at', 'is_verified'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.match(row.deleted_at!, TS);
    assert.equal(row.is_verified, 0);
  });

  it("answers Record Not Found for another account's sender and leaves it unchanged", async () => {
    const { id, form } = await saveSender(suite.t.b);
    const before = await details(id, suite.t.b);
    const rnf = { status: 'failed', errors: 'Record Not Found' };
    for (const r of [
      await suite.t.a.get('/sender/details', { sender_id: id }),
      await suite.t.a.post('/sender/update', { ...form, sender_id: id, from_email: uniqueEmail() }),
      await suite.t.a.delete('/sender/delete', { sender_id: id }),
      await suite.t.a.get('/sender/resend-mail', { sender_id: id }),
    ]) {
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, rnf);
    }
    assert.deepEqual(await details(id, suite.t.b), before);
  });

  it('answers Record Not Found for a missing or malformed sender_id', async () => {
    for (const q of [{}, { sender_id: 'abc' }, { sender_id: '-1' }, { sender_id: '1e3' }, { sender_id: '99999999999' }]) {
      for (const path of ['/sender/details', '/sender/resend-mail']) {
        const r = await suite.t.a.get(path, q);
        assert.equal(r.status, 404, `${path} ${JSON.stringify(q)}`);
        assert.deepEqual(r.body, { status: 'failed', errors: 'Record Not Found' });
      }
      assert.equal((await suite.t.a.delete('/sender/delete', q)).status, 404);
    }
  });

  it('requires the API keys on every sender endpoint but not on the verification page', async () => {
    await assertNeedsKeys(suite.t.anon, [['GET', '/senders']]);
    assert.equal((await suite.t.anon.post('/sender/save', senderForm())).status, 401);
    assert.equal((await open('/sender/verify?token=x')).statusCode, 400);
  });

  it('lets only verified senders of the account be used (rule for single sends and automations)', async () => {
    const { id, mail } = await saveSender();
    const { id: foreign } = await saveSender(suite.t.b);
    const userId = suite.t.a.keys!.user_id;
    const db = suite.t.database.db;
    const deps = suite.t.app.deps;
    assert.equal(await senderFailure(deps, userId, id), 'The selected sender id is not verified.');
    assert.equal(await findVerifiedSender(db, userId, id), undefined);
    await open(linkIn(mail));
    assert.equal(await senderFailure(deps, userId, id), null);
    assert.equal((await findVerifiedSender(db, userId, id))?.id, id);
    assert.equal(await senderFailure(deps, userId, foreign), 'The selected sender id is invalid.');
  });
});
