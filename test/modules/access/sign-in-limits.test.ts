import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestClock } from '../../../src/util/clock.js';
import { setup, type TestContext } from '../../helpers.js';
import {
  CHECKS_PER_CLIENT,
  HASHES_AT_ONCE,
  HASHES_WAITING,
  hashPassword,
  TOO_MANY_HASHES,
} from '../../../src/modules/access/sessions.passwords.js';
import { PASSWORD, person, postFrom } from './sessions.helpers.js';

const WRONG = { status: 'failed', errors: 'Invalid email or password' };
const BUSY = { status: 'failed', errors: TOO_MANY_HASHES };

describe('sign-in under attack', () => {
  let t: TestContext;
  let clock: TestClock;
  before(async () => {
    t = await setup({}, { clock: '2030-01-01T00:00:00.000Z' });
    clock = t.clock as TestClock;
  });
  after(() => t.close());

  /** A sign-in of `email` from client address `ip`. */
  const signInFrom = (ip: string, email: string, password: string) => postFrom(t, ip, '/session/sign-in', { email, password });

  it('bounds the password hashes running at once: the excess gets 429 at once', async () => {
    const results = await Promise.allSettled(Array.from({ length: 60 }, () => hashPassword('a password of the flood')));
    const refused = results.filter((r) => r.status === 'rejected');
    assert.ok(refused.length >= 60 - HASHES_AT_ONCE - HASHES_WAITING, `${refused.length} refused`);
    for (const r of refused) assert.equal((r as PromiseRejectedResult).reason.message, TOO_MANY_HASHES);
    // Every slot came back.
    assert.match(await hashPassword('after the flood'), /^\$scrypt\$/);
  });

  it('lets a known person sign in during a flood of sign-ins for unknown addresses, from many client addresses', async () => {
    const p = await person(t, 'viewer');
    for (let round = 0; round < 3; round++) {
      const flood = Array.from({ length: 40 }, (_, i) =>
        signInFrom(`10.0.${round}.${i + 1}`, `nobody.${round}.${i}.${Math.random()}@example.com`, 'a wrong password'),
      );
      const real = await signInFrom('192.0.2.1', p.email, PASSWORD);
      assert.equal(real.status, 200, `round ${round}: ${real.text}`);
      // The unknown addresses took no slot: each was answered as a wrong password is.
      for (const r of await Promise.all(flood)) assert.deepEqual(r.body, WRONG);
    }
  });

  it('lets one client address check a few passwords at once, and a known person in beside its flood', async () => {
    const p = await person(t, 'viewer');
    const flood = Array.from({ length: 40 }, (_, i) => signInFrom('198.51.100.7', `flood.${i}@example.com`, 'a wrong password'));
    const real = await signInFrom('192.0.2.2', p.email, PASSWORD);
    assert.equal(real.status, 200, real.text);
    const answers = await Promise.all(flood);
    assert.equal(answers.filter((r) => r.status === 401).length, CHECKS_PER_CLIENT);
    for (const r of answers.filter((x) => x.status !== 401)) {
      assert.equal(r.status, 429);
      assert.deepEqual(r.body, BUSY);
    }
  });

  it('locks an email for the client address that failed 10 times, never for the person elsewhere', async () => {
    const p = await person(t, 'viewer');
    const attacker = '203.0.113.66';
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000);
      assert.deepEqual((await signInFrom(attacker, p.email, 'a wrong password')).body, WRONG);
    }
    const locked = await signInFrom(attacker, p.email, PASSWORD);
    assert.equal(locked.status, 429);
    assert.equal(locked.headers['retry-after'], '900');
    assert.equal(locked.body.errors, 'Too many failed sign-ins for this email: retry in 15 minutes.');
    // The person, elsewhere, is slowed to one attempt every few seconds at most, never locked out.
    const slowed = await signInFrom('192.0.2.3', p.email, PASSWORD);
    assert.equal(slowed.status, 429);
    assert.equal(slowed.headers['retry-after'], '5');
    assert.equal(slowed.body.errors, 'Too many failed sign-ins for this email: retry in 5 seconds.');
    clock.advance(5_000);
    assert.equal((await signInFrom('192.0.2.3', p.email, PASSWORD)).status, 200);
    // Their sign-in does not lift the lock of the client that failed.
    clock.advance(5_000);
    assert.equal((await signInFrom(attacker, p.email, PASSWORD)).status, 429);
    // Other addresses guessing on are slowed, one failure every 5 seconds…
    assert.deepEqual((await signInFrom('203.0.113.67', p.email, 'wrong again')).body, WRONG);
    const next = await signInFrom('203.0.113.68', p.email, 'wrong again');
    assert.equal(next.status, 429);
    assert.equal(next.headers['retry-after'], '5');
    // …and the person still gets in, seconds later.
    clock.advance(5_000);
    assert.equal((await signInFrom('192.0.2.3', p.email, PASSWORD)).status, 200);
    // The lock ends 15 minutes after the tenth failure of its client address.
    clock.advance(15 * 60_000);
    assert.equal((await signInFrom(attacker, p.email, PASSWORD)).status, 200);
  });

  it('refuses a sign-in posted by a page of another site, and takes one from the console or a program', async () => {
    const p = await person(t, 'viewer');
    const refused = { status: 'failed', errors: 'A sign-in from another site is refused.' };
    for (const headers of [
      { origin: 'https://attacker.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'http://localhost:3000', 'sec-fetch-site': 'cross-site' },
    ] as Array<Record<string, string>>) {
      const r = await postFrom(t, '192.0.2.9', '/session/sign-in', { email: p.email, password: PASSWORD }, headers);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.deepEqual(r.body, refused);
      assert.equal(r.headers['set-cookie'], undefined);
    }
    for (const headers of [
      {},
      { origin: 'http://localhost:3000', 'sec-fetch-site': 'same-origin' },
      { origin: 'http://console.example.test:8080', host: 'console.example.test:8080' },
    ] as Array<Record<string, string>>) {
      const r = await postFrom(t, '192.0.2.9', '/session/sign-in', { email: p.email, password: PASSWORD }, headers);
      assert.equal(r.status, 200, JSON.stringify(headers));
    }
  });

  it('counts wrong current passwords on /me/password as failed sign-ins, under the same lock', async () => {
    const p = await person(t, 'viewer');
    const change = (current: string) =>
      p.request('POST', '/me/password', { json: { current_password: current, password: 'a brand new password' } });
    for (let i = 0; i < 10; i++) {
      clock.advance(1_000);
      const r = await change('not the password');
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.body.errors, { current_password: ['The current password is incorrect.'] });
    }
    const locked = await change(PASSWORD);
    assert.equal(locked.status, 429);
    assert.equal(locked.body.errors, 'Too many failed sign-ins for this email: retry in 15 minutes.');
    // The same lock as sign-ins from that client address (app.inject's own).
    assert.equal((await signInFrom('127.0.0.1', p.email, PASSWORD)).status, 429);
    clock.advance(15 * 60_000);
    assert.equal((await change(PASSWORD)).status, 200);
  });
});
