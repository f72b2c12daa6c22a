import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNeedsKeys, fieldErrors } from '../helpers.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { countersOf, sendTo, setupBounces, suppressionsOf } from './bounces.helpers.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('POST /bounces/report and the suppressions API', () => {
  let t: SendsContext & { sink: SmtpSink };
  let seq = 0;
  const addr = (tag: string) => `${tag}.${++seq}@example.com`;
  before(async () => {
    t = await setupBounces();
  });
  after(() => t.close());

  test('need keys', async () => {
    await assertNeedsKeys(t.anon, [
      ['POST', '/bounces/report'],
      ['GET', '/suppressions'],
      ['DELETE', '/suppressions/delete'],
    ]);
  });

  test('with message_id: matched within the account and counted on the message', async () => {
    const [m] = await sendTo(t, t.a, [addr('report')]);
    const r = await t.a.post('/bounces/report', {
      email: m.email,
      type: 'hard',
      reason: '550 5.1.1 user unknown',
      message_id: `<${m.messageId}>`,
    });
    assert.deepEqual(r.body, { status: 'success', message: 'Recorded Successfully' });
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
    // Reported twice: counted once.
    await t.a.post('/bounces/report', { email: m.email, type: 'hard', message_id: m.messageId });
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
  });

  test("another account's message id changes nothing", async () => {
    const [m] = await sendTo(t, t.a, [addr('theirs')]);
    const r = await t.b.post('/bounces/report', { email: m.email, type: 'complaint', message_id: m.messageId });
    assert.deepEqual(r.body, { status: 'success', message: 'Recorded Successfully' });
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 0 });
    assert.deepEqual(await suppressionsOf(t, m.email), []);
    assert.equal((await t.a.get('/global-unsubscribes')).body.message.unSubscribers.length, 0);
  });

  test('without message_id: applied to the address in the caller account only; listed, paged and lifted', async () => {
    const hard = addr('Hard');
    const soft = addr('soft');
    const angry = addr('angry');
    assert.equal((await t.a.post('/bounces/report', { email: hard, type: 'hard', reason: 'no such user' })).status, 200);
    for (let i = 0; i < 3; i++) await t.a.post('/bounces/report', { email: soft, type: 'soft', reason: 'mailbox full' });
    await t.a.post('/bounces/report', { email: angry, type: 'complaint' });
    assert.deepEqual(
      (await suppressionsOf(t, hard)).map((s) => s.user_id),
      [t.a.keys!.user_id],
    );
    const list = await t.a.get('/suppressions');
    assert.equal(list.status, 200);
    const items = list.body.message.suppressions;
    assert.deepEqual(
      items.slice(0, 3).map((s: Record<string, unknown>) => [s.email, s.reason, s.detail]),
      [
        [angry, 'complaint', null],
        [soft, 'soft_bounces', 'mailbox full'],
        [hard, 'hard_bounce', 'no such user'],
      ],
    );
    for (const s of items) assert.match(s.created_at, TS);
    assert.ok(
      (await t.a.get('/global-unsubscribes')).body.message.unSubscribers.some((u: { email_address: string }) => u.email_address === angry),
    );
    const page = await t.a.get('/suppressions', { page: 2, per_page: 1 });
    assert.deepEqual(page.body.message, { suppressions: [items[1]], meta: { page: 2, per_page: 1, total: items.length } });
    assert.deepEqual((await t.b.get('/suppressions')).body.message.suppressions, []);
    // Another account cannot lift it; the owner can, once (any case).
    assert.deepEqual((await t.b.delete('/suppressions/delete', { email: hard })).body, { status: 'failed', errors: 'Record not found' });
    assert.deepEqual((await t.a.delete('/suppressions/delete', { email: hard.toUpperCase() })).body, {
      status: 'success',
      message: 'Deleted Successfully',
    });
    assert.equal((await t.a.delete('/suppressions/delete', { email: hard })).status, 404);
    assert.equal((await t.a.delete('/suppressions/delete')).status, 404);
    // Lifting a soft suppression forgets its history: one more soft bounce does not suppress again.
    await t.a.delete('/suppressions/delete', { email: soft });
    await t.a.post('/bounces/report', { email: soft, type: 'soft' });
    assert.deepEqual(await suppressionsOf(t, soft), []);
  });

  test('a suppressed address is not mailed again by the account', async () => {
    const email = addr('blocked');
    await t.a.post('/bounces/report', { email, type: 'hard' });
    const before = t.sink.to(email).length;
    const h = await import('../modules/single-sends.helpers.js');
    const { type } = await h.typeWith(t.a, [[email]]);
    await h.createSend(t.a, h.sendForm({ sender: await h.verifiedSender(t, t.a), group: await h.group(t.a), type }));
    await (await import('../helpers.js')).drainQueue(t);
    assert.equal(t.sink.to(email).length, before);
  });

  test('validation: Laravel messages, all fields together', async () => {
    assert.deepEqual(
      (await t.a.post('/bounces/report', {})).body,
      fieldErrors({ email: ['The email field is required.'], type: ['The type field is required.'] }),
    );
    assert.deepEqual(
      (await t.a.post('/bounces/report', { email: 'nope', type: 'bogus', reason: 'x'.repeat(1001) })).body,
      fieldErrors({
        email: ['The email must be a valid email address.'],
        type: ['The selected type is invalid.'],
        reason: ['The reason must not be greater than 1000 characters.'],
      }),
    );
  });
});
