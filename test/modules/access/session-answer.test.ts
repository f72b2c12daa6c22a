/**
 * What a session answers the console: the person's scopes (from the role, so the console offers
 * only what the person may do), the account's two-factor rule, and the CSRF token again from
 * `GET /session`, so a second tab (which cannot read the HttpOnly cookie) can make changes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROLE_GRANTS, SCOPES, type Role } from '../../../src/http/scopes.js';
import { setup, type TestContext } from '../../helpers.js';
import { person, SessionClient } from './sessions.helpers.js';

describe('the answer of a session', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('lists the scopes of each role, in the order of the scope table', async () => {
    for (const role of ['owner', 'admin', 'editor', 'viewer'] as Role[]) {
      const p = await person(t, role);
      const r = await p.get('/session');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body.message), ['user', 'csrf_token', 'scopes', 'require_two_factor']);
      assert.deepEqual(
        r.body.message.scopes,
        SCOPES.filter((s) => ROLE_GRANTS[role].scopes.has(s)),
        role,
      );
    }
    const viewer = (await (await person(t, 'viewer')).get('/session')).body.message.scopes as string[];
    assert.ok(viewer.includes('contacts.read') && !viewer.includes('contacts.write') && !viewer.includes('users.read'));
    const editor = (await (await person(t, 'editor')).get('/session')).body.message.scopes as string[];
    assert.ok(editor.includes('sends.write') && !editor.includes('webhooks.write') && !editor.includes('keys.read'));
  });

  it('gives a second tab the same CSRF token, which its changes then carry', async () => {
    const p = await person(t, 'editor');
    // A new tab has the cookie (the browser sends it) but not the token: GET needs none.
    const tab = new SessionClient(t.app, p.cookie, '', p.personId);
    const again = await tab.get('/session');
    assert.equal(again.status, 200);
    assert.equal(again.body.message.csrf_token, p.csrf);
    assert.equal((await tab.post('/contacts-type/add', { name: 'Without token' })).status, 403);
    const withToken = new SessionClient(t.app, p.cookie, again.body.message.csrf_token, p.personId);
    assert.equal((await withToken.post('/contacts-type/add', { name: 'From the second tab' })).status, 200);
  });

  it("states the account's two-factor rule", async () => {
    const p = await person(t, 'admin');
    assert.equal((await p.get('/session')).body.message.require_two_factor, 0);
    assert.equal((await t.a.post('/account/settings/update', { require_two_factor: 1 })).status, 200);
    // The person without two-factor still learns it, and that only setting it up is open.
    const r = await p.get('/session');
    assert.equal(r.status, 200);
    assert.equal(r.body.message.require_two_factor, 1);
    assert.equal(r.body.message.user.two_factor, 0);
    assert.equal((await t.a.post('/account/settings/update', { require_two_factor: 0 })).status, 200);
  });
});
