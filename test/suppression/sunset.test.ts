import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, make } from '../helpers.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import { enqueueSystemMail } from '../../src/modules/notifications/notifications.mail.js';
import { suppressAddress } from '../../src/suppression/suppression.writes.js';
import { SKIP_TEXTS } from '../../src/suppression/suppression.reads.js';
import { createSend, group, messagesOf, sendForm, setupSends, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { systemMail } from '../messages/queue.helpers.js';
import { DAY, seedMessage, type SeededMessage } from '../modules/segments/engagement.helpers.js';
import { keyClient } from '../modules/access/keys.helpers.js';

/** `n` delivered campaign messages to `email`, the first `firstAgo` before now, the others a day apart after it. */
async function history(t: SendsContext, userId: number, email: string, n: number, firstAgo: number, extra: Partial<SeededMessage> = {}) {
  for (let i = 0; i < n; i++) await seedMessage(t, { userId, email, kind: 'automation', sentAgo: firstAgo - i * DAY, ...extra });
}

const PEOPLE = [
  'old@example.com',
  'few@example.com',
  'active@example.com',
  'young@example.com',
  'clicker@example.com',
  'machine@example.com',
  'bounced@example.com',
  'hard@example.com',
  'tested@example.com',
];

/**
 * Account A's history (defaults: 180 days, 5 messages): old@ got 6 messages from 200 days ago and
 * a person last opened one 190 days ago; few@ got only 3; active@ opened 10 days ago; young@'s
 * first message is 100 days old; clicker@ clicked (did not open) 20 days ago; machine@ was opened
 * by machines only; bounced@'s messages all bounced; hard@ is suppressed for a hard bounce already;
 * tested@ got test mails only. Account B mailed old@ too, and B's history never counts for A.
 */
describe('the sunset policy', () => {
  let t: SendsContext;
  let type: number;
  let base: { sender: number; group: number; type: number };
  const a = () => t.a.keys!.user_id;

  before(async () => {
    t = await setupSends({ start: '2030-06-01T12:00:00.000Z' });
    type = await make.contactType(t.a, 'Readers');
    for (const email of PEOPLE) await make.contact(t.a, { contact_type_id: type, email });
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const u = a();
    await history(t, u, 'old@example.com', 6, 200 * DAY);
    await seedMessage(t, { userId: u, email: 'old@example.com', kind: 'single_send', sentAgo: 195 * DAY, openedAgo: 190 * DAY });
    await history(t, u, 'few@example.com', 3, 200 * DAY);
    await history(t, u, 'active@example.com', 6, 200 * DAY);
    await seedMessage(t, { userId: u, email: 'active@example.com', sentAgo: 12 * DAY, openedAgo: 10 * DAY });
    await history(t, u, 'young@example.com', 6, 100 * DAY);
    await history(t, u, 'clicker@example.com', 6, 200 * DAY);
    await seedMessage(t, { userId: u, email: 'clicker@example.com', sentAgo: 25 * DAY, clickedAgo: 20 * DAY });
    await history(t, u, 'machine@example.com', 6, 200 * DAY, { machineOpens: 2 });
    await history(t, u, 'bounced@example.com', 6, 200 * DAY, { state: 'bounced' });
    await history(t, u, 'hard@example.com', 6, 200 * DAY);
    await suppressAddress(
      t.database.db,
      { user_id: u, email: 'hard@example.com', email_key: 'hard@example.com' },
      'hard_bounce',
      '550 5.1.1',
      t.clock.now(),
    );
    await history(t, u, 'tested@example.com', 6, 200 * DAY, { kind: 'test' });
    await history(t, t.b.keys!.user_id, 'ghost@example.com', 6, 200 * DAY);
  });
  after(() => t.close());

  const preview = async (query: object = {}) => {
    const r = await t.a.get('/account/sunset-preview', query);
    assert.equal(r.status, 200, r.text);
    return r.body.message as { count: number; sample: string[] };
  };
  const listed = async () =>
    ((await t.a.get('/suppressions')).body.message.suppressions as Array<{ email: string; reason: string; detail: string }>)
      .map((s) => `${s.email} ${s.reason}`)
      .sort();

  it('previews, while off, the addresses it would list', async () => {
    assert.deepEqual(await preview(), { count: 2, sample: ['machine@example.com', 'old@example.com'] });
    assert.deepEqual((await preview({ sunset_days: 90 })).sample, ['machine@example.com', 'old@example.com', 'young@example.com']);
    assert.deepEqual((await preview({ sunset_min_messages: 3 })).sample, ['few@example.com', 'machine@example.com', 'old@example.com']);
    // A person's open 190 days ago is within 195 days.
    assert.deepEqual((await preview({ sunset_days: 195 })).sample, ['machine@example.com']);
    assert.deepEqual(await t.b.get('/account/sunset-preview').then((r) => r.body.message), { count: 1, sample: ['ghost@example.com'] });
    assert.deepEqual(await listed(), ['hard@example.com hard_bounce']);
  });

  it('shows the addresses only to a caller who may read contacts', async () => {
    const settingsOnly = await keyClient(t.a, ['settings.read']);
    assert.deepEqual((await settingsOnly.get('/account/sunset-preview')).body.message, { count: 2, sample: [] });
    const contactsToo = await keyClient(t.a, ['settings.read', 'contacts.read']);
    assert.deepEqual((await contactsToo.get('/account/sunset-preview')).body.message, await preview());
  });

  it('queues a send before the policy goes on: the batch check skips the inactive addresses', async () => {
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'Before' }));
    assert.equal(await startDueSends(t.deps, t.clock.now()), 1);
    assert.equal((await messagesOf(t, utr)).length, PEOPLE.length - 1, 'everyone but the hard bounce is queued');
    assert.equal((await t.a.post('/account/settings/update', { sunset_enabled: 1 })).status, 200);
    await drainQueue(t);
    const states = Object.fromEntries((await messagesOf(t, utr)).map((m) => [m.email_key, `${m.state} ${m.last_error ?? ''}`.trim()]));
    assert.equal(states['old@example.com'], `suppressed ${SKIP_TEXTS.inactive}`);
    assert.equal(states['machine@example.com'], `suppressed ${SKIP_TEXTS.inactive}`);
    for (const email of ['few@example.com', 'active@example.com', 'young@example.com', 'clicker@example.com'])
      assert.equal(states[email], 'sent');
  });

  it('while on: lists them as inactive and a send leaves them out', async () => {
    assert.deepEqual(await listed(), ['hard@example.com hard_bounce', 'machine@example.com inactive', 'old@example.com inactive']);
    const entry = (await t.a.get('/suppressions')).body.message.suppressions.find((s: { email: string }) => s.email === 'old@example.com');
    assert.match(entry.detail, /180 days/);
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'While on' }));
    await drainQueue(t);
    const sent = (await messagesOf(t, utr)).map((m) => m.email_key);
    assert.ok(!sent.includes('old@example.com') && !sent.includes('machine@example.com') && !sent.includes('hard@example.com'));
    assert.ok(sent.includes('active@example.com'));
    // The service's own mail still reaches an inactive address.
    await enqueueSystemMail(t.database.db, a(), systemMail('old@example.com'), t.clock.now());
    await drainQueue(t);
    const note = await t.database.db
      .selectFrom('mail_messages')
      .select('state')
      .where('kind', '=', 'system')
      .where('email_key', '=', 'old@example.com')
      .executeTakeFirstOrThrow();
    assert.equal(note.state, 'sent');
  });

  it('lifting an inactive address mails it again, and counts it again only from the lift', async () => {
    const r = await t.a.delete('/suppressions/delete', { email: 'OLD@example.com' });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual(await listed(), ['hard@example.com hard_bounce', 'machine@example.com inactive']);
    assert.deepEqual(
      (await preview({ sunset_min_messages: 1 })).sample,
      ['few@example.com', 'machine@example.com'],
      'nothing counts before the lift',
    );
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'After the lift' }));
    await drainQueue(t);
    assert.ok((await messagesOf(t, utr)).some((m) => m.email_key === 'old@example.com' && m.state === 'sent'));
    // With one message counted from the lift, old@ goes quiet again 180 days after it: the hourly sweep lists it.
    assert.equal((await t.a.post('/account/settings/update', { sunset_min_messages: 1 })).status, 200);
    assert.ok(!(await listed()).includes('old@example.com inactive'));
    t.clock.advance(181 * DAY);
    await drainQueue(t);
    assert.ok((await listed()).includes('old@example.com inactive'));
  });

  it('a person who engages again leaves the list at the next sweep; switched off, the list empties', async () => {
    await seedMessage(t, { userId: a(), email: 'machine@example.com', kind: 'automation', sentAgo: 2 * 200 * DAY, openedAgo: DAY });
    t.clock.advance(61 * 60 * 1000);
    await drainQueue(t);
    assert.ok(!(await listed()).some((l) => l.startsWith('machine@example.com')));
    assert.equal((await t.a.post('/account/settings/update', { sunset_enabled: 0 })).status, 200);
    assert.deepEqual(await listed(), ['hard@example.com hard_bounce']);
    assert.equal((await t.a.delete('/suppressions/delete', { email: 'nobody@example.com' })).status, 404);
  });
});
