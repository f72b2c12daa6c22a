import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import type { TestClock } from '../../../src/util/clock.js';
import { setup, type TestContext } from '../../helpers.js';
import { PASSWORD, person, personRefused, signIn, type SessionClient } from './sessions.helpers.js';

/** The code of `secret` at `at` (ms), as an authenticator app shows it. */
const code = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

const REQUIRED = { status: 'failed', errors: 'Two-factor code required' };
const INVALID = { status: 'failed', errors: 'Invalid two-factor code' };
const ENDED = { status: 'failed', errors: 'Your session has ended: sign in again.' };

describe('two-factor authentication', () => {
  let t: TestContext;
  let clock: TestClock;
  // A step boundary: 2030-01-01T00:00:00Z is a multiple of 30 seconds.
  const T0 = Date.parse('2030-01-01T00:00:00.000Z');
  before(async () => {
    t = await setup({}, { clock: '2030-01-01T00:00:00.000Z' });
    clock = t.clock as TestClock;
  });
  after(() => t.close());

  /** A person with two-factor on: their session, secret and recovery codes. */
  async function withTwoFactor(role = 'editor'): Promise<{ p: SessionClient & { email: string }; secret: string; codes: string[] }> {
    const p = await person(t, role);
    const setupAnswer = await p.post('/me/2fa/setup');
    assert.equal(setupAnswer.status, 200, setupAnswer.text);
    const { secret } = setupAnswer.body.message;
    clock.advance(30_000);
    const enabled = await p.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) });
    assert.equal(enabled.status, 200, enabled.text);
    return { p, secret, codes: enabled.body.message.recovery_codes };
  }

  it('sets up a TOTP secret and turns it on with a code of it, answering ten recovery codes once', async () => {
    const p = await person(t, 'editor');
    const r = await p.post('/me/2fa/setup');
    assert.equal(r.status, 200);
    const { secret, otpauth_url } = r.body.message;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const url = new URL(otpauth_url);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.host, 'totp');
    assert.equal(url.searchParams.get('secret'), secret);
    assert.equal(url.searchParams.get('algorithm'), 'SHA1');
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
    assert.match(decodeURIComponent(url.pathname), new RegExp(p.email.replace('.', '\\.')));
    assert.deepEqual((await p.post('/me/2fa/enable', { code: '000000' })).body, {
      status: 'failed',
      errors: { code: ['The two-factor code is invalid.'] },
    });
    const enabled = await p.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) });
    assert.equal(enabled.status, 200);
    const codes = enabled.body.message.recovery_codes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const c of codes) assert.match(c, /^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
    assert.equal((await p.get('/session')).body.message.user.two_factor, 1);
    assert.equal((await p.post('/me/2fa/setup')).status, 409);
    // Neither the secret nor a recovery code is kept in the clear.
    const row = JSON.stringify(await t.database.db.selectFrom('people').selectAll().where('id', '=', p.personId).execute());
    const codesRows = JSON.stringify(await t.database.db.selectFrom('recovery_codes').selectAll().execute());
    assert.ok(!row.includes(secret));
    for (const c of codes) assert.ok(!codesRows.includes(c) && !codesRows.includes(c.replace(/-/g, '')));
  });

  it('turns on only within 10 minutes of signing in, so a session stolen later cannot lock the person out', async () => {
    const p = await person(t, 'editor');
    clock.advance(10 * 60_000 + 1_000);
    const { secret } = (await p.post('/me/2fa/setup')).body.message;
    const late = await p.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) });
    assert.equal(late.status, 403);
    assert.deepEqual(late.body, {
      status: 'failed',
      errors: 'Sign in again to turn on two-factor authentication: it needs a sign-in within the last 10 minutes.',
    });
    assert.equal((await p.get('/session')).body.message.user.two_factor, 0);
    const again = await signIn(t, p.email);
    clock.advance(30_000);
    assert.equal((await again.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) })).status, 200);
  });

  it('asks for the code at sign-in, accepts each code once, and refuses a wrong one', async () => {
    const { p, secret } = await withTwoFactor();
    assert.deepEqual((await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD } })).body, REQUIRED);
    assert.deepEqual(
      (await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD, code: '123456' } })).body,
      INVALID,
    );
    // The wrong password is still the same answer, code or not.
    assert.deepEqual(
      (await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: 'wrong password', code: '123456' } })).body,
      { status: 'failed', errors: 'Invalid email or password' },
    );
    clock.advance(30_000);
    const now = code(secret, clock.now().getTime());
    await signIn(t, p.email, PASSWORD, { code: now });
    assert.deepEqual(
      (await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD, code: now } })).body,
      INVALID,
    );
  });

  it('accepts the codes of the step before and after, not two steps away', async () => {
    const { p, secret } = await withTwoFactor();
    const attempt = (at: number) =>
      t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD, code: code(secret, at) } });
    // Move to a fresh step boundary well after the codes used so far.
    clock.set(new Date(Math.ceil(clock.now().getTime() / 30_000) * 30_000 + 10 * 30_000));
    const now = clock.now().getTime();
    assert.deepEqual((await attempt(now - 60_000)).body, INVALID, 'two steps before');
    assert.equal((await attempt(now - 30_000)).status, 200, 'the step before');
    clock.advance(29_999);
    assert.equal((await attempt(clock.now().getTime())).status, 200, 'the last millisecond of a step');
    assert.deepEqual((await attempt(clock.now().getTime() + 30_001)).body, INVALID, 'two steps after');
    assert.equal((await attempt(clock.now().getTime() + 1)).status, 200, 'the step after');
    // An older code than the last accepted one is refused even inside the window.
    assert.deepEqual((await attempt(clock.now().getTime())).body, INVALID);
  });

  it('takes a recovery code once in place of a code', async () => {
    const { p, codes } = await withTwoFactor();
    await signIn(t, p.email, PASSWORD, { code: codes[3].toLowerCase() });
    assert.deepEqual(
      (await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD, code: codes[3] } })).body,
      INVALID,
    );
    await signIn(t, p.email, PASSWORD, { code: codes[4].replace(/-/g, '') });
  });

  it('turns off with the password and a code', async () => {
    const { p, secret } = await withTwoFactor();
    clock.advance(30_000);
    const bad = await p.post('/me/2fa/disable', { password: 'not my password', code: code(secret, clock.now().getTime()) });
    assert.deepEqual(bad.body, { status: 'failed', errors: { password: ['The password is incorrect.'] } });
    assert.deepEqual((await p.post('/me/2fa/disable', { password: PASSWORD, code: '000000' })).body, {
      status: 'failed',
      errors: { code: ['The two-factor code is invalid.'] },
    });
    assert.equal((await p.post('/me/2fa/disable', { password: PASSWORD, code: code(secret, clock.now().getTime()) })).status, 200);
    await signIn(t, p.email);
    assert.equal(
      (await t.database.db.selectFrom('recovery_codes').selectAll().execute()).filter((r) => r.person_id === p.personId).length,
      0,
    );
  });

  it('counts wrong passwords and codes on /me/2fa/disable as failed sign-ins, under the same lock', async () => {
    const { p, secret } = await withTwoFactor();
    for (let i = 0; i < 10; i++) {
      clock.advance(1_000);
      const wrong = i % 2 ? { password: PASSWORD, code: '000000' } : { password: 'not my password', code: '000000' };
      assert.equal((await p.post('/me/2fa/disable', wrong)).status, 422);
    }
    clock.advance(30_000);
    const locked = await p.post('/me/2fa/disable', { password: PASSWORD, code: code(secret, clock.now().getTime()) });
    assert.equal(locked.status, 429);
    assert.equal(locked.body.errors, 'Too many failed sign-ins for this email: retry in 15 minutes.');
    assert.equal((await p.get('/session')).body.message.user.two_factor, 1);
    clock.advance(15 * 60_000);
    assert.equal((await p.post('/me/2fa/disable', { password: PASSWORD, code: code(secret, clock.now().getTime()) })).status, 200);
  });

  it('changes the password with the current one, ending the other sessions', async () => {
    const p = await person(t, 'viewer');
    const other = await signIn(t, p.email);
    assert.deepEqual((await p.post('/me/password', { current_password: 'wrong one here', password: 'another long password' })).body, {
      status: 'failed',
      errors: { current_password: ['The current password is incorrect.'] },
    });
    assert.deepEqual((await p.post('/me/password', { current_password: PASSWORD, password: 'short' })).body.errors, {
      password: ['The password must be at least 12 characters.'],
    });
    assert.equal((await p.post('/me/password', { current_password: PASSWORD, password: 'another long password' })).status, 200);
    assert.equal((await p.get('/session')).status, 200);
    assert.deepEqual((await other.get('/session')).body, ENDED);
    await signIn(t, p.email, 'another long password');
  });

  it('keeps people without two-factor out of everything but setting it up, once an owner requires it', async () => {
    const admin = await person(t, 'admin');
    const owner = await person(t, 'owner');
    assert.deepEqual((await admin.post('/account/settings/update', { require_two_factor: 1 })).body, {
      status: 'failed',
      errors: 'Only an owner can change require_two_factor.',
    });
    assert.equal((await owner.post('/account/settings/update', { require_two_factor: 1 })).status, 200);
    assert.equal((await t.a.get('/account/settings')).body.message.settings.require_two_factor, 1);
    const out = { status: 'failed', errors: 'This account requires two-factor authentication: set it up first.' };
    assert.deepEqual((await admin.get('/contacts-type')).body, out);
    assert.deepEqual((await admin.post('/me/password', { current_password: PASSWORD, password: 'another long password' })).body, out);
    assert.equal((await admin.get('/session')).status, 200);
    const { secret } = (await admin.post('/me/2fa/setup')).body.message;
    clock.advance(30_000);
    assert.equal((await admin.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) })).status, 200);
    assert.equal((await admin.get('/contacts-type')).status, 200);
    // Keys are not people: they go on as before.
    assert.equal((await t.a.get('/contacts-type')).status, 200);
    assert.equal((await t.a.post('/account/settings/update', { require_two_factor: 0 })).status, 200);
    assert.equal((await owner.get('/contacts-type')).status, 200);
    assert.deepEqual((await (await person(t, 'viewer')).get('/users')).body, personRefused('users.read'));
  });

  it('keeps neither the secret nor the recovery codes in the audit log, and takes no Idempotency-Key', async () => {
    const p = await person(t, 'editor');
    const headers = { 'idempotency-key': 'two-factor-setup' };
    const first = await p.request('POST', '/me/2fa/setup', { headers });
    const again = await p.request('POST', '/me/2fa/setup', { headers });
    // A person's own routes are never answered again from another request: each setup is a new secret.
    assert.equal(again.headers['idempotent-replayed'], undefined);
    assert.notEqual(again.body.message.secret, first.body.message.secret);
    const { secret } = again.body.message;
    clock.advance(30_000);
    const enabled = await p.post('/me/2fa/enable', { code: code(secret, clock.now().getTime()) });
    assert.equal(enabled.status, 200);
    const stored = JSON.stringify(await t.database.db.selectFrom('idempotency_keys').selectAll().execute());
    const audit = JSON.stringify(await t.database.db.selectFrom('audit_log').selectAll().execute());
    for (const s of [first.body.message.secret, secret, ...enabled.body.message.recovery_codes, PASSWORD]) {
      assert.ok(!stored.includes(s), s);
      assert.ok(!audit.includes(s), s);
    }
    assert.match(audit, /POST \/me\/2fa\/enable/);
  });

  it('starts at a step boundary', () => assert.equal(T0 % 30_000, 0));
});
