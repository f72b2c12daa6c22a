import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../../helpers.js';
import { keyClient, keyRefused } from './keys.helpers.js';
import { unseal } from '../../../src/util/seal.js';
import { person, signIn } from './sessions.helpers.js';

/** The read scopes a viewer holds, as the product defines them. */
const VIEWER_SCOPES = [
  'contacts',
  'segments',
  'lists',
  'senders',
  'designs',
  'sends',
  'automations',
  'forms',
  'webhooks',
  'settings',
  'mail',
].map((a) => `${a}.read`);

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

  /** The text of the access mail last queued for `email` (sealed with the app secret). */
  async function lastMailTo(email: string): Promise<{ subject: string; text: string }> {
    const row = await t.database.db
      .selectFrom('mail_messages')
      .select('payload')
      .where('kind', '=', 'access')
      .where('email_key', '=', email.toLowerCase())
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    return JSON.parse(unseal(t.config.appSecret, 'access-mail', row.payload!)!);
  }

  it("answers the invitation of another account's person as for a fresh address, and mails them what happened", async () => {
    const theirs = await person(t, 'viewer', t.b);
    const fresh = await t.a.post('/users/invite', { email: 'fresh.address@example.com', role: 'editor' });
    const taken = await t.a.post('/users/invite', { email: theirs.email, role: 'editor' });
    assert.deepEqual(fresh.body, { status: 'success', message: 'Invited Successfully', id: fresh.body.id });
    assert.deepEqual(taken.body, { status: 'success', message: 'Invited Successfully', id: taken.body.id });
    const listed = (await t.a.get('/users')).body.message.users.find((u: { id: number }) => u.id === taken.body.id);
    assert.deepEqual([listed.email, listed.name, listed.role], [theirs.email, null, 'editor']);
    // The account now has the address: a second invitation is refused, as for any address.
    for (const email of [theirs.email, 'fresh.address@example.com']) {
      const again = await t.a.post('/users/invite', { email: email.toUpperCase(), role: 'viewer' });
      assert.deepEqual(again.body, { status: 'failed', errors: { email: ['The email has already been taken.'] } });
    }
    // The person learns what happened; no link, since an address belongs to one person.
    const mail = await lastMailTo(theirs.email);
    assert.equal(mail.subject, 'You are invited to Account A');
    assert.equal(mail.subject, (await lastMailTo('fresh.address@example.com')).subject);
    assert.match(mail.text, /already belongs to a person of another account/);
    assert.doesNotMatch(mail.text, /\/app\/invite\//);
    // Their own account is untouched.
    assert.equal((await signIn(t, theirs.email)).personId, theirs.personId);
    assert.equal((await t.a.delete('/users/delete', { id: taken.body.id })).status, 200);
    assert.equal((await signIn(t, theirs.email)).personId, theirs.personId);
  });
});
