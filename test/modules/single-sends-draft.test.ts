import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainQueue, fieldErrors } from '../helpers.js';
import { completeSends, startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import {
  createSend,
  details,
  group,
  messagesOf,
  Rnf,
  sendForm,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('single sends: drafts (`draft` 1) and the recipient count', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  before(async () => {
    t = await setupSends({ start: '2030-01-15T10:00:00.000Z' });
    const { type } = await typeWith(t.a, [
      ['ann@example.com', 'Ann'],
      ['bob@example.com', 'Bob'],
    ]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    await drainQueue(t); // the sender's verification mail
  });
  after(() => t.close());

  test('create with draft 1 saves a draft (status 0): nothing is queued, now or at its schedule', async () => {
    const now = await createSend(t.a, sendForm(base, { draft: 1, single_send_name: 'Draft now' }));
    const later = await createSend(
      t.a,
      sendForm(base, {
        draft: '1',
        single_send_name: 'Draft later',
        schedule_type: 1,
        schedule_date: '2030-01-15',
        schedule_time: '11:00',
      }),
    );
    assert.equal((await details(t.a, now)).status, 0);
    assert.equal((await details(t.a, later)).status, 0);
    await startDueSends(t.deps, t.clock.now());
    t.clock.advance(3 * 3600_000);
    assert.equal(await drainQueue(t), 0);
    await startDueSends(t.deps, t.clock.now());
    await completeSends(t.deps, t.clock.now());
    for (const utr of [now, later]) {
      const d = await details(t.a, utr);
      assert.deepEqual([d.status, d.triggered, d.delivered, d.sent_at], [0, 0, 0, null]);
      assert.deepEqual(await messagesOf(t, utr), []);
    }
  });

  test('draft 0 (and no draft) behaves as before: ready (status 1), then sent', async () => {
    const explicit = await createSend(t.a, sendForm(base, { draft: 0 }));
    const absent = await createSend(t.a, sendForm(base));
    assert.equal((await details(t.a, explicit)).status, 1);
    assert.equal((await details(t.a, absent)).status, 1);
    await drainQueue(t);
    assert.equal((await details(t.a, explicit)).status, 3);
    assert.equal((await details(t.a, explicit)).delivered, 2);
  });

  test('update with draft 0 makes a draft ready and it is sent; update with draft 1 takes a ready send back to draft', async () => {
    const utr = await createSend(t.a, sendForm(base, { draft: 1 }));
    const keep = await t.a.post('/single/send/update', { utr, ...sendForm(base, { draft: 1, subject: 'Still a draft' }) });
    assert.deepEqual(keep.body, { status: 'success', message: { utr } });
    assert.deepEqual([(await details(t.a, utr)).status, (await details(t.a, utr)).subject], [0, 'Still a draft']);
    assert.equal(await drainQueue(t), 0);

    const go = await t.a.post('/single/send/update', { utr, ...sendForm(base, { draft: 0 }) });
    assert.equal(go.status, 200, go.text);
    assert.equal((await details(t.a, utr)).status, 1);
    await drainQueue(t);
    assert.equal((await details(t.a, utr)).status, 3);

    const scheduled = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '09:00' }));
    assert.equal((await details(t.a, scheduled)).status, 1);
    const back = await t.a.post('/single/send/update', {
      utr: scheduled,
      ...sendForm(base, { draft: 1, schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '09:00' }),
    });
    assert.equal(back.status, 200, back.text);
    t.clock.set('2030-02-02T00:00:00.000Z');
    assert.equal(await drainQueue(t), 0);
    assert.equal((await details(t.a, scheduled)).status, 0);
  });

  test('draft is validated on create and update', async () => {
    for (const [bad, text] of [
      [2, ['The selected draft is invalid.']],
      [-1, ['The selected draft is invalid.']],
      ['yes', ['The draft must be an integer.', 'The selected draft is invalid.']],
    ] as const) {
      const r = await t.a.post('/single/send/create', sendForm(base, { draft: bad }));
      assert.deepEqual(r.body, fieldErrors({ draft: [...text] }), `draft ${bad}`);
      assert.equal(r.status, 422);
    }
    const utr = await createSend(t.a, sendForm(base, { draft: 1 }));
    const r = await t.a.post('/single/send/update', { utr, ...sendForm(base, { draft: 5 }) });
    assert.deepEqual(r.body, fieldErrors({ draft: ['The selected draft is invalid.'] }));
    assert.equal((await details(t.a, utr)).status, 0);
  });

  test("update of another account's draft: 404, and it stays a draft", async () => {
    const utr = await createSend(t.a, sendForm(base, { draft: 1 }));
    const bBase = { sender: await verifiedSender(t, t.b), group: await group(t.b), type: (await typeWith(t.b, [['b@example.com']])).type };
    const r = await t.b.post('/single/send/update', { utr, ...sendForm(bBase, { draft: 0 }) });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
    assert.equal((await details(t.a, utr)).status, 0);
  });

  test('recipients-count is what a real send then triggers: targets minus exclusions, unsubscribes, suppressions, deleted contacts, each address once', async () => {
    const one = await typeWith(t.a, [
      ['c1@example.com', 'C1'],
      ['C2@example.com', 'C2'],
      ['c3@example.com', 'C3'],
      ['c4@example.com', 'C4'],
      ['c5@example.com', 'C5'],
      ['c6@example.com', 'C6'],
      ['c7@example.com', 'C7'],
    ]);
    const two = await typeWith(t.a, [
      ['c2@EXAMPLE.com', 'Again'],
      ['d1@example.com', 'D1'],
    ]);
    const ex = await typeWith(t.a, [['c3@example.com', 'Excluded']]);
    const other = await group(t.a, 'Other');
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: 'C4@example.com' })).status, 200);
    const addToGroup = (id: number, email_address: string) =>
      t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: id, email_address });
    assert.equal((await addToGroup(base.group, 'c5@example.com')).status, 200);
    assert.equal((await addToGroup(other, 'c6@example.com')).status, 200); // another group: still mailed
    await t.database.db
      .insertInto('suppressions')
      .values({
        user_id: (await t.database.db.selectFrom('contacts').select('user_id').where('id', '=', one.ids[0]).executeTakeFirstOrThrow())
          .user_id,
        email_key: 'c7@example.com',
        email: 'c7@example.com',
        reason: 'hard_bounce',
        detail: null,
        created_at: '2030-01-01T00:00:00.000000Z',
      })
      .execute();
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: one.ids[0] })).status, 200);
    // Another account's unsubscribe of d1 changes nothing here.
    assert.equal((await t.b.post('/global-unsubscribes/save', { email_address: 'd1@example.com' })).status, 200);

    const form = sendForm(
      { ...base, type: one.type },
      {
        draft: 1,
        recipient_id: [`contacts_${one.type}`, `contacts_${two.type}`],
        exclude_specific_recipient_id: [`contacts_${ex.type}`],
      },
    );
    const utr = await createSend(t.a, form);
    const count = await t.a.get('/single-send/recipients-count', { utr });
    assert.equal(count.status, 200, count.text);
    // c2 (once), c6, d1.
    assert.deepEqual(count.body, { status: 'success', message: { count: 3 } });

    assert.equal((await t.a.post('/single/send/update', { utr, ...form, draft: 0 })).status, 200);
    await startDueSends(t.deps, t.clock.now());
    const d = await details(t.a, utr);
    assert.equal(d.triggered, 3);
    assert.deepEqual(
      (await messagesOf(t, utr)).map((m) => m.email_key),
      ['c2@example.com', 'c6@example.com', 'd1@example.com'],
    );
    await drainQueue(t);
  });

  test('recipients-count of a draft with nobody to mail is 0', async () => {
    const { type } = await typeWith(t.a, []);
    const utr = await createSend(t.a, sendForm({ ...base, type }, { draft: 1 }));
    assert.deepEqual((await t.a.get('/single-send/recipients-count', { utr })).body, { status: 'success', message: { count: 0 } });
  });

  test("recipients-count: Record not found for another account's send, an unknown or missing utr; keys required", async () => {
    const utr = await createSend(t.a, sendForm(base, { draft: 1 }));
    for (const [c, q] of [
      [t.b, { utr }],
      [t.a, { utr: UNKNOWN }],
      [t.a, { utr: 'not-a-uuid' }],
      [t.a, {}],
    ] as const) {
      const r = await c.get('/single-send/recipients-count', q);
      assert.equal(r.status, 404, JSON.stringify(q));
      assert.deepEqual(r.body, Rnf);
    }
    assert.equal((await t.anon.get('/single-send/recipients-count', { utr })).status, 401);
    assert.equal((await t.a.delete('/single/send/delete', { utr })).status, 200);
    assert.deepEqual((await t.a.get('/single-send/recipients-count', { utr })).body, Rnf);
  });
});
