import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { unsubscribeEmail } from '../../src/modules/unsubscribes/unsubscribes.service.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import { group, type SendsContext } from '../modules/single-sends.helpers.js';
import { sendTo, setupBounces } from '../inbound/bounces.helpers.js';
import { addEndpoint, changeEndpoint, deliveriesOf, eventsSince, lastEventId } from './events.helpers.js';

const URLENCODED = { 'content-type': 'application/x-www-form-urlencoded' };

describe('contact.unsubscribed: written wherever an address joins a list, only when it is new there', () => {
  let t: SendsContext & { sink: SmtpSink };
  let links: ReturnType<typeof trackingLinks>;
  let endpointA: number;
  let endpointB: number;
  let seq = 0;
  const addr = (tag: string) => `${tag}.${++seq}@example.com`;

  before(async () => {
    t = await setupBounces();
    links = trackingLinks(t.config);
    endpointA = await addEndpoint(t.database, t.a.keys!.user_id, { events: ['contact.unsubscribed'] });
    endpointB = await addEndpoint(t.database, t.b.keys!.user_id);
  });
  after(() => t.close());

  /** The `[type, data]` of the events written since `since`. */
  const written = async (since: number) => (await eventsSince(t.database, since)).map((e) => [e.type, e.body.data]);
  const post = (path: string, payload: string) => t.anon.request('POST', path, { payload, headers: URLENCODED });
  const contactOf = async (id: number) =>
    (await t.database.db.selectFrom('mail_messages').select('contact_id').where('id', '=', id).executeTakeFirstOrThrow()).contact_id;

  test('the API: global and group adds, one event per address new on the list; removals and repeats write nothing', async () => {
    const [one, two, three] = [addr('One'), addr('two'), addr('three')];
    let since = await lastEventId(t.database);
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: `${one}, ${two}` })).status, 200);
    assert.deepEqual(await written(since), [
      ['contact.unsubscribed', { email: one, scope: 'global' }],
      ['contact.unsubscribed', { email: two, scope: 'global' }],
    ]);
    const events = await eventsSince(t.database, since);
    assert.equal(events[0].emailKey, one.toLowerCase(), 'the event is found by its address');
    assert.equal(events[0].userId, t.a.keys!.user_id);

    since = await lastEventId(t.database);
    const r = await t.a.post('/global-unsubscribes/save', { email_address: `${one.toUpperCase()},${three}` });
    assert.equal(r.status, 200);
    assert.deepEqual(await written(since), [['contact.unsubscribed', { email: three, scope: 'global' }]]);

    const grp = await group(t.a, 'Digest');
    since = await lastEventId(t.database);
    const add = await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: grp, email_address: `${one},${one}` });
    assert.equal(add.status, 200, add.text);
    assert.deepEqual(await written(since), [['contact.unsubscribed', { email: one, scope: grp }]]);

    since = await lastEventId(t.database);
    const [id] = r.body.ids;
    assert.equal((await t.a.delete('/global-unsubscribes/delete', { id })).status, 200);
    assert.equal((await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: grp, email_address: one })).status, 200);
    // A request with one bad address adds nothing, so writes nothing.
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: `${addr('fine')},not-an-address` })).status, 422);
    assert.deepEqual(await written(since), []);
    assert.equal(await deliveriesOf(t.database, endpointB), 0, "another account's endpoint gets nothing");
  });

  test('one-click through a message: the list of its group, with its contact; once', async () => {
    const [m] = await sendTo(t, t.a, [addr('oneclick')]);
    const groupId = (
      await t.database.db.selectFrom('single_sends').select('unsubscribe_group_id').where('id', '=', m.sendId).executeTakeFirstOrThrow()
    ).unsubscribe_group_id;
    const since = await lastEventId(t.database);
    const page = `/u/${links.unsubscribeToken(m.id)}`;
    for (let i = 0; i < 2; i++) assert.equal((await post(page, 'List-Unsubscribe=One-Click')).status, 200);
    assert.deepEqual(await written(since), [
      ['contact.unsubscribed', { email: m.email, scope: Number(groupId), contact_id: await contactOf(m.id) }],
    ]);
  });

  test('the preferences form: one event per list newly checked; saving again or unchecking writes nothing', async () => {
    const [m] = await sendTo(t, t.a, [addr('prefs')]);
    const groupId = Number(
      (await t.database.db.selectFrom('single_sends').select('unsubscribe_group_id').where('id', '=', m.sendId).executeTakeFirstOrThrow())
        .unsubscribe_group_id,
    );
    const contact_id = await contactOf(m.id);
    const page = `/u/${links.unsubscribeToken(m.id)}`;
    const since = await lastEventId(t.database);
    assert.equal((await post(page, `preferences=1&global=1&groups=${groupId}`)).status, 200);
    assert.deepEqual(await written(since), [
      ['contact.unsubscribed', { email: m.email, scope: 'global', contact_id }],
      ['contact.unsubscribed', { email: m.email, scope: groupId, contact_id }],
    ]);
    const since2 = await lastEventId(t.database);
    await post(page, `preferences=1&global=1&groups=${groupId}`);
    await post(page, 'preferences=1');
    assert.deepEqual(await written(since2), []);
    // Checked again after unchecking: new on the list again, so written again.
    await post(page, 'preferences=1&global=1');
    assert.deepEqual(await written(since2), [['contact.unsubscribed', { email: m.email, scope: 'global', contact_id }]]);
  });

  test('an unsubscribe rolled back with its transaction leaves no event', async () => {
    const since = await lastEventId(t.database);
    const email = addr('rolled');
    await assert.rejects(
      t.database.db.transaction().execute(async (trx) => {
        assert.equal(await unsubscribeEmail(trx, t.a.keys!.user_id, email, null, { now: t.clock.now() }), true);
        throw new Error('the cause fails after the unsubscribe');
      }),
      /the cause fails/,
    );
    assert.deepEqual(await written(since), []);
    assert.deepEqual(await t.database.db.selectFrom('unsubscribers').select('id').where('email_key', '=', email).execute(), []);
  });

  test('nothing is written for an endpoint that is disabled or does not take the type', async () => {
    for (const change of [{ enabled: 0 as const }, { enabled: 1 as const, events: ['message.delivered'] }]) {
      await changeEndpoint(t.database, endpointA, change);
      const since = await lastEventId(t.database);
      assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: addr('unheard') })).status, 200);
      assert.deepEqual(await written(since), [], JSON.stringify(change));
    }
    await changeEndpoint(t.database, endpointA, { events: ['contact.unsubscribed'] });
  });
});
