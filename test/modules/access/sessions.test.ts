import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestClock } from '../../../src/util/clock.js';
import { setup, type TestContext } from '../../helpers.js';
import { mailedLink, PASSWORD, person, personRefused, sessionCookie, SessionClient, signIn } from './sessions.helpers.js';

const HOUR = 60 * 60 * 1000;
const WRONG = { status: 'failed', errors: 'Invalid email or password' };
const ENDED = { status: 'failed', errors: 'Your session has ended: sign in again.' };
const CSRF = { status: 'failed', errors: 'Invalid CSRF token' };
const GONE = { status: 'failed', errors: 'This link is no longer valid' };

describe('people and sessions', () => {
  let t: TestContext;
  let clock: TestClock;
  before(async () => {
    t = await setup({}, { clock: '2030-01-01T00:00:00.000Z' });
    clock = t.clock as TestClock;
  });
  after(() => t.close());

  it('invites by mail, accepts the invitation once, signs in with a strict HttpOnly cookie', async () => {
    const invited = await t.a.post('/users/invite', { email: 'Ada@Example.com', role: 'editor' });
    assert.deepEqual(invited.body, { status: 'success', message: 'Invited Successfully', id: invited.body.id });
    const link = await mailedLink(t, 'ada@example.com');
    assert.match(link.url, /^http:\/\/localhost:3000\/app\/invite\/\d+\.[A-Za-z0-9_-]{43}$/);
    const listed = (await t.a.get('/users')).body.message.users.find((u: { id: number }) => u.id === invited.body.id);
    assert.deepEqual(listed, {
      id: invited.body.id,
      email: 'Ada@Example.com',
      name: null,
      role: 'editor',
      two_factor: 0,
      last_sign_in_at: null,
      created_at: '2030-01-01T00:00:00.000000Z',
    });
    // Not before accepting: there is no password yet.
    assert.deepEqual(
      (await t.anon.request('POST', '/session/sign-in', { json: { email: 'ada@example.com', password: PASSWORD } })).body,
      WRONG,
    );
    const short = await t.anon.post('/session/accept-invite', { token: link.token, name: 'Ada', password: 'short' });
    assert.deepEqual(short.body.errors, { password: ['The password must be at least 12 characters.'] });
    const accepted = await t.anon.post('/session/accept-invite', { token: link.token, name: 'Ada Lovelace', password: PASSWORD });
    assert.deepEqual(accepted.body, { status: 'success', message: 'Accepted Successfully' });
    assert.deepEqual((await t.anon.post('/session/accept-invite', { token: link.token, name: 'Again', password: PASSWORD })).body, GONE);

    const r = await t.anon.request('POST', '/session/sign-in', { json: { email: 'ADA@example.com', password: PASSWORD } });
    assert.equal(r.status, 200, r.text);
    const cookie = ([] as string[]).concat(r.headers['set-cookie'] as string).find((c) => c.startsWith('campaign_session='))!;
    assert.match(cookie, /; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/);
    assert.doesNotMatch(cookie, /Secure/);
    assert.deepEqual(Object.keys(r.body.message), ['user', 'csrf_token', 'scopes', 'require_two_factor']);
    assert.equal(r.body.message.user.name, 'Ada Lovelace');
    assert.equal(r.body.message.user.last_sign_in_at, '2030-01-01T00:00:00.000000Z');
    const me = new SessionClient(t.app, sessionCookie(r), r.body.message.csrf_token, invited.body.id);
    const session = await me.get('/session');
    assert.deepEqual(session.body.message, r.body.message);
  });

  it('refuses an invitation link that is unknown, garbled or expired', async () => {
    await t.a.post('/users/invite', { email: 'late@example.com', role: 'viewer' });
    const { token } = await mailedLink(t, 'late@example.com');
    for (const bad of ['nonsense', token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), `9999.${token.split('.')[1]}`])
      assert.deepEqual((await t.anon.post('/session/accept-invite', { token: bad, name: 'X', password: PASSWORD })).body, GONE);
    clock.advance(7 * 24 * HOUR);
    assert.deepEqual((await t.anon.post('/session/accept-invite', { token, name: 'Late', password: PASSWORD })).body, GONE);
  });

  it('answers a wrong password and an unknown address alike, after the same work', async () => {
    const p = await person(t, 'viewer');
    const time = async (email: string) => {
      const start = process.hrtime.bigint();
      const r = await t.anon.request('POST', '/session/sign-in', { json: { email, password: 'not the password at all' } });
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, WRONG);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    await time('warm.up@example.com');
    const wrong = Math.min(await time(p.email), await time(p.email));
    const unknown = Math.min(await time('nobody@example.com'), await time('nobody@example.com'));
    assert.ok(unknown > wrong * 0.5 && unknown < wrong * 2, `wrong password ${wrong} ms, unknown address ${unknown} ms`);
  });

  it('takes the person’s role on keyed routes, and refuses what the role lacks', async () => {
    const viewer = await person(t, 'viewer');
    assert.equal((await viewer.get('/contacts-type')).status, 200);
    assert.deepEqual((await viewer.post('/contacts-type/add', { name: 'No' })).body, personRefused('contacts.write'));
    assert.deepEqual((await viewer.get('/users')).body, personRefused('users.read'));
    const editor = await person(t, 'editor');
    assert.equal((await editor.post('/contacts-type/add', { name: 'By editor' })).status, 200);
    assert.deepEqual((await editor.get('/keys')).body, personRefused('keys.read'));
  });

  it('needs the session’s own CSRF token on every request that may change something', async () => {
    const one = await person(t, 'editor');
    const two = await person(t, 'editor');
    const missing = await one.request('POST', '/contacts-type/add', { form: { name: 'CSRF 1' }, headers: { 'x-csrf-token': '' } });
    assert.equal(missing.status, 403);
    assert.deepEqual(missing.body, CSRF);
    const other = await one.request('POST', '/contacts-type/add', { form: { name: 'CSRF 2' }, headers: { 'x-csrf-token': two.csrf } });
    assert.deepEqual(other.body, CSRF);
    // A GET that changes state needs it too.
    const pause = await one.request('GET', '/automations/pause', { query: { utr: 'x' }, headers: { 'x-csrf-token': 'nope' } });
    assert.deepEqual(pause.body, CSRF);
    assert.equal((await one.post('/contacts-type/add', { name: 'CSRF 3' })).status, 200);
    // A read needs none.
    assert.equal((await one.request('GET', '/contacts-type', { headers: { 'x-csrf-token': '' } })).status, 200);
    const names = (await t.a.get('/contacts-type')).body.message.contactTypes.map((c: { name: string }) => c.name);
    assert.ok(!names.includes('CSRF 1') && !names.includes('CSRF 2'));
  });

  it('keeps no session a cookie named before sign-in (no fixation)', async () => {
    const p = await person(t, 'viewer');
    const planted = 'attacker-chosen-value';
    const r = await t.anon.request('POST', '/session/sign-in', {
      json: { email: p.email, password: PASSWORD },
      headers: { cookie: `campaign_session=${planted}` },
    });
    assert.notEqual(sessionCookie(r), planted);
    assert.deepEqual((await new SessionClient(t.app, planted, '', p.personId).get('/session')).body, ENDED);
    // A live session brought to a new sign-in ends: its cookie is worth nothing afterwards.
    const again = await t.anon.request('POST', '/session/sign-in', {
      json: { email: p.email, password: PASSWORD },
      headers: { cookie: `campaign_session=${p.cookie}` },
    });
    assert.notEqual(sessionCookie(again), p.cookie);
    assert.deepEqual((await p.get('/session')).body, ENDED);
  });

  it('ends a session 12 hours unused and 7 days after sign-in', async () => {
    const idle = await person(t, 'viewer');
    clock.advance(12 * HOUR - 1000);
    assert.equal((await idle.get('/session')).status, 200);
    clock.advance(12 * HOUR);
    assert.deepEqual((await idle.get('/session')).body, ENDED);
    const busy = await person(t, 'viewer');
    for (let i = 0; i < 15; i++) {
      clock.advance(11 * HOUR);
      assert.equal((await busy.get('/contacts-type')).status, 200, `after ${(i + 1) * 11} hours`);
    }
    clock.advance(3 * HOUR);
    assert.deepEqual((await busy.get('/contacts-type')).body, ENDED);
  });

  it('signs out: the cookie is cleared and the session ends', async () => {
    const p = await person(t, 'viewer');
    const r = await p.post('/session/sign-out');
    assert.deepEqual(r.body, { status: 'success', message: 'Signed Out Successfully' });
    assert.match(
      String(r.headers['set-cookie']),
      /campaign_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict|campaign_session=;.*Expires=Thu, 01 Jan 1970/,
    );
    assert.deepEqual((await p.get('/session')).body, ENDED);
    assert.deepEqual((await t.anon.get('/session')).body, { status: 'failed', errors: 'Not signed in' });
  });

  it('ends a removed person’s sessions at once, and applies a new role at the next request', async () => {
    const p = await person(t, 'editor');
    assert.equal((await p.post('/contacts-type/add', { name: 'Before demotion' })).status, 200);
    assert.deepEqual((await t.a.post('/users/update', { id: p.personId, role: 'viewer' })).body, {
      status: 'success',
      message: 'Updated Successfully',
    });
    assert.deepEqual((await p.post('/contacts-type/add', { name: 'After demotion' })).body, personRefused('contacts.write'));
    assert.deepEqual((await t.a.delete('/users/delete', { id: p.personId })).body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await p.get('/contacts-type')).body, ENDED);
    assert.deepEqual((await t.b.delete('/users/delete', { id: 1 })).body, { status: 'failed', errors: 'Record not found' });
  });

  it('keeps at least one owner, and lets only owners make or remove owners', async () => {
    const owner = await person(t, 'owner');
    const admin = await person(t, 'admin');
    const onlyOwners = { status: 'failed', errors: 'Only an owner can make or remove an owner.' };
    assert.deepEqual((await admin.post('/users/invite', { email: 'owner2@example.com', role: 'owner' })).body, onlyOwners);
    assert.deepEqual((await admin.post('/users/update', { id: owner.personId, role: 'viewer' })).body, onlyOwners);
    assert.deepEqual((await admin.delete('/users/delete', { id: owner.personId })).body, onlyOwners);
    assert.deepEqual((await admin.post('/users/update', { id: admin.personId, role: 'owner' })).body, onlyOwners);
    const last = { status: 'failed', errors: 'An account keeps at least one owner' };
    const demote = await owner.post('/users/update', { id: owner.personId, role: 'admin' });
    assert.equal(demote.status, 409);
    assert.deepEqual(demote.body, last);
    assert.deepEqual((await owner.delete('/users/delete', { id: owner.personId })).body, last);
    assert.deepEqual((await t.a.delete('/users/delete', { id: owner.personId })).body, last);
    // With a second owner, the first may step down.
    assert.equal((await owner.post('/users/update', { id: admin.personId, role: 'owner' })).status, 200);
    assert.equal((await owner.post('/users/update', { id: owner.personId, role: 'admin' })).status, 200);
    assert.deepEqual((await owner.post('/users/update', { id: admin.personId, role: 'viewer' })).body, onlyOwners);
  });

  it('mails a reset link valid 1 hour and once for a known address, and answers alike for any', async () => {
    const p = await person(t, 'viewer');
    const before = await t.database.db.selectFrom('mail_messages').select('id').where('kind', '=', 'access').execute();
    assert.deepEqual((await t.anon.post('/session/forgot', { email: 'unknown@example.com' })).body, {
      status: 'success',
      message: 'Sent Successfully',
    });
    assert.equal(
      (await t.database.db.selectFrom('mail_messages').select('id').where('kind', '=', 'access').execute()).length,
      before.length,
    );
    assert.deepEqual((await t.anon.post('/session/forgot', { email: p.email })).body, { status: 'success', message: 'Sent Successfully' });
    const { url, token } = await mailedLink(t, p.email);
    assert.match(url, /^http:\/\/localhost:3000\/app\/reset\//);
    const other = await signIn(t, p.email);
    const fresh = 'a brand new password';
    assert.deepEqual((await t.anon.post('/session/reset', { token, password: fresh })).body, {
      status: 'success',
      message: 'Updated Successfully',
    });
    assert.deepEqual((await t.anon.post('/session/reset', { token, password: fresh })).body, GONE);
    // Every session of the person ended; the old password no longer works, the new one does.
    assert.deepEqual((await p.get('/session')).body, ENDED);
    assert.deepEqual((await other.get('/session')).body, ENDED);
    assert.deepEqual((await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD } })).body, WRONG);
    await signIn(t, p.email, fresh);
    await t.anon.post('/session/forgot', { email: p.email });
    const late = await mailedLink(t, p.email);
    clock.advance(HOUR);
    assert.deepEqual((await t.anon.post('/session/reset', { token: late.token, password: fresh })).body, GONE);
  });

  it('writes sign-in, failed sign-in and sign-out to the audit log, and never a password, token or cookie', async () => {
    const p = await person(t, 'admin');
    await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: 'a wrong password' } });
    const s = await signIn(t, p.email);
    await s.post('/contacts-type/add', { name: 'By session' });
    await s.post('/session/sign-out');
    const entries = (await t.a.get('/audit-log', { actor_type: 'user', actor_id: p.personId })).body.message.entries;
    assert.deepEqual(
      entries.map((e: { action: string; status: number }) => `${e.action} ${e.status}`),
      [
        'session.sign_out 200',
        'POST /contacts-type/add 200',
        'session.sign_in 200',
        'session.sign_in_failed 401',
        'session.sign_in 200',
        'session.invite_accepted 200',
      ],
    );
    assert.deepEqual(entries[0].actor, { type: 'user', id: p.personId, name: p.email });
    const rows = JSON.stringify(await t.database.db.selectFrom('audit_log').selectAll().execute());
    for (const secret of [PASSWORD, 'a wrong password', p.cookie, p.csrf, s.cookie, s.csrf, s.cookie.split('.')[1]])
      assert.ok(!rows.includes(secret), secret);
  });
  it('lets a person make keys only within their own scopes; full ones only an owner', async () => {
    const admin = await person(t, 'admin');
    const full = await admin.request('POST', '/keys/create', { json: { name: 'Admin full', scopes: ['full'] } });
    assert.deepEqual(full.body, personRefused('grant full scopes'));
    const made = await admin.request('POST', '/keys/create', { json: { name: 'Admin key', scopes: ['contacts.write', 'audit.read'] } });
    assert.equal(made.status, 200);
    const key = (await t.a.get('/keys')).body.message.keys.find((k: { id: number }) => k.id === made.body.message.id);
    assert.deepEqual(key.created_by, { type: 'user', id: admin.personId, name: admin.email });
    const owner = await person(t, 'owner');
    assert.equal((await owner.request('POST', '/keys/create', { json: { name: 'Owner full', scopes: ['full'] } })).status, 200);
  });
});

describe('sessions on https', () => {
  it('marks the cookie Secure when PUBLIC_URL is https', async () => {
    const t = await setup({}, { env: { PUBLIC_URL: 'https://campaign.example.com' } });
    try {
      const p = await person(t, 'viewer');
      const r = await t.anon.request('POST', '/session/sign-in', { json: { email: p.email, password: PASSWORD } });
      assert.match(String(r.headers['set-cookie']), /; Secure; SameSite=Strict|; HttpOnly; Secure/);
      assert.match((await mailedLink(t, p.email)).url, /^https:\/\/campaign\.example\.com\/app\/invite\//);
    } finally {
      await t.close();
    }
  });
});
