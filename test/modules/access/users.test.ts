import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../../helpers.js';
import { keyClient, keyRefused } from './keys.helpers.js';
import { person } from './sessions.helpers.js';

/** The read scopes a viewer holds, as the product defines them. */
const VIEWER_SCOPES = ['contacts', 'segments', 'lists', 'senders', 'designs', 'sends', 'automations', 'forms', 'webhooks', 'settings'].map(
  (a) => `${a}.read`,
);

describe('giving a role', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('needs every scope of the role, to invite or to promote', async () => {
    const usersOnly = await keyClient(t.a, ['users.write']);
    for (const role of ['admin', 'editor', 'viewer']) {
      const r = await usersOnly.post('/users/invite', { email: `by.users.key.${role}@example.com`, role });
      assert.equal(r.status, 403, r.text);
      assert.deepEqual(r.body, keyRefused('contacts.read'));
    }
    const viewerMaker = await keyClient(t.a, ['users.write', ...VIEWER_SCOPES]);
    const invited = await viewerMaker.post('/users/invite', { email: 'viewer.by.key@example.com', role: 'viewer' });
    assert.equal(invited.status, 200, invited.text);
    assert.deepEqual(
      (await viewerMaker.post('/users/invite', { email: 'editor.by.key@example.com', role: 'editor' })).body,
      keyRefused('contacts.write'),
    );
    for (const maker of [usersOnly, viewerMaker]) {
      const r = await maker.post('/users/update', { id: invited.body.id, role: 'admin' });
      assert.equal(r.status, 403, r.text);
    }
    assert.deepEqual((await usersOnly.post('/users/update', { id: invited.body.id, role: 'admin' })).body, keyRefused('contacts.read'));
    assert.deepEqual((await viewerMaker.post('/users/update', { id: invited.body.id, role: 'admin' })).body, keyRefused('contacts.write'));
    const listed = (await t.a.get('/users')).body.message.users;
    assert.deepEqual(
      listed.map((u: { email: string; role: string }) => [u.email, u.role]),
      [['viewer.by.key@example.com', 'viewer']],
    );
    // An admin holds every scope: they may make admins.
    const admin = await person(t, 'admin');
    assert.equal((await admin.post('/users/update', { id: invited.body.id, role: 'admin' })).status, 200);
  });
});
