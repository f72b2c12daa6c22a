/**
 * Intake writes bounces and complaints in batches: the events that arrive together share one
 * transaction and one call of the ledger. Each caller is answered only once its batch is committed,
 * every event counts once however the batches fall, and an event that cannot be written fails
 * alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { takeInEvent, type InboundEvent } from '../../src/inbound/intake.js';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { countersOf, postMail, reportOf, sendTo, setupBounces, suppressionsOf } from './bounces.helpers.js';

/** The histogram of events per intake transaction: how many transactions, how many events. */
async function batches(t: SendsContext): Promise<{ count: number; sum: number }> {
  const metric = await t.deps.metrics.getSingleMetric('inbound_batch_events')?.get();
  const value = (name: string) => metric?.values.find((v) => (v as { metricName?: string }).metricName === name)?.value ?? 0;
  return { count: value('inbound_batch_events_count'), sum: value('inbound_batch_events_sum') };
}

describe('bounce intake in batches', () => {
  let t: SendsContext & { sink: SmtpSink };
  let seq = 0;
  const addrs = (tag: string, n: number) => Array.from({ length: n }, () => `${tag}.${++seq}@example.com`);
  before(async () => {
    t = await setupBounces();
  });
  after(() => t.close());

  test('40 DSNs posted at once: fewer transactions than reports, each counted once, each answer after its commit', async () => {
    const sent = await sendTo(t, t.a, addrs('burst', 40));
    const before = await batches(t);
    const stateWhenAnswered: string[] = [];
    await Promise.all(
      sent.map(async (m) => {
        const r = await postMail(t, reportOf('postfix-dsn-user-unknown', m));
        assert.deepEqual(r.body.message, { kind: 'bounce', type: 'hard', recipient: m.email, matched: true });
        const row = await t.database.db.selectFrom('mail_messages').select('state').where('id', '=', m.id).executeTakeFirstOrThrow();
        stateWhenAnswered.push(row.state);
      }),
    );
    // Every report was stored when it was answered.
    assert.deepEqual(new Set(stateWhenAnswered), new Set(['bounced']));
    assert.deepEqual(await countersOf(t, sent[0].sendId), {
      delivered: 0,
      bounces: 40,
      hard_bounces: 40,
      soft_bounces: 0,
      spam_reports: 0,
    });
    for (const m of sent.slice(0, 5)) assert.equal((await suppressionsOf(t, m.email)).length, 1);
    const after = await batches(t);
    assert.equal(after.sum - before.sum, 40);
    assert.ok(after.count - before.count < 40, `${after.count - before.count} transactions for 40 reports`);
  });

  test('the same report twice in one batch, and a complaint with a bounce of the same message: each counts once', async () => {
    const [m, n] = await sendTo(t, t.a, addrs('twice', 2));
    const dsn = reportOf('postfix-dsn-user-unknown', m);
    const [one, two, complaint, bounce] = await Promise.all([
      postMail(t, dsn),
      postMail(t, dsn),
      postMail(t, reportOf('arf-abuse', n)),
      postMail(t, reportOf('postfix-dsn-mailbox-full', n)),
    ]);
    for (const r of [one, two, complaint, bounce]) assert.equal(r.body.message.matched, true);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 2, hard_bounces: 1, soft_bounces: 1, spam_reports: 1 });
  });

  test('an event that cannot be written fails alone; the others of its batch are written', async () => {
    const [good, bad] = await sendTo(t, t.a, addrs('alone', 2));
    const event = (m: typeof good, type: string): InboundEvent => ({
      source: 'report',
      kind: 'bounce',
      // Not a bounce type: the ledger's counter update fails on it.
      type: type as InboundEvent['type'],
      email: m.email,
      verp: m.verp,
      reason: 'test',
      eventKey: `batch-test:${m.id}`,
    });
    const [ok, failed] = await Promise.allSettled([
      takeInEvent(t.deps, MAIL_KINDS, event(good, 'hard')),
      takeInEvent(t.deps, MAIL_KINDS, event(bad, 'nonsense')),
    ]);
    assert.equal(ok.status, 'fulfilled');
    assert.deepEqual(ok.status === 'fulfilled' && ok.value, { matched: true, counted: true, recipient: good.email });
    assert.equal(failed.status, 'rejected');
    const rows = await t.database.db
      .selectFrom('mail_messages')
      .select(['id', 'state'])
      .where('id', 'in', [good.id, bad.id])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.state),
      ['bounced', 'sent'],
    );
    // The failed event's key was not kept: sent again, it is taken in.
    const again = await takeInEvent(t.deps, MAIL_KINDS, event(bad, 'soft'));
    assert.deepEqual(again, { matched: true, counted: true, recipient: bad.email });
  });
});
