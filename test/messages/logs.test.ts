import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { startJobs } from '../../src/lanes.js';
import { act, automationWith } from '../modules/automations-delivery.helpers.js';
import { createSend, group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';

/** A real logger writing JSON lines into memory, as the production logger writes them to stdout. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: Fastify({ logger: { level: 'info', stream } }).log, lines };
}

describe('sending leaves a trace in the log', () => {
  let t: SendsContext;
  const { log, lines } = capturingLogger();
  const withMsg = (msg: string) => lines.filter((l) => l.msg === msg);

  /** Runs a worker with the capturing logger until the queue is empty. */
  async function drain(): Promise<void> {
    const worker = startJobs({ ...t.deps, log }, { lanes: ['scheduler', 'mail'], loop: false });
    try {
      while ((await worker.tick()) > 0);
    } finally {
      await worker.stop();
    }
  }

  before(async () => {
    t = await setupSends({ sink: true });
  });
  after(() => t.close());

  test('a single send logs its start with the recipients, each bounce, and its completion with the counts', async () => {
    const { type } = await typeWith(t.a, [['logged@example.com', 'Log'], ['refused@example.com', 'Refused'], ['third@example.com']]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const utr = await createSend(t.a, sendForm(base, { template_html: '<p>Hi</p>', recipient_id: [`contacts_${type}`] }));
    t.sink!.reject('refused@example.com', 550, { text: '5.1.1 no such user' });
    await drain();

    const [started] = withMsg('single send started');
    assert.equal(started?.singleSend, utr);
    assert.equal(started.recipients, 3);
    const bounced = withMsg('mail bounced');
    assert.equal(bounced.length, 1);
    assert.equal(bounced[0].email, 'refused@example.com');
    assert.equal(bounced[0].type, 'hard');
    assert.match(bounced[0].reason, /550/);
    const [completed] = withMsg('single send completed');
    assert.deepEqual(
      { utr: completed?.singleSend, triggered: completed?.triggered, delivered: completed?.delivered, bounces: completed?.bounces },
      { utr, triggered: 3, delivered: 2, bounces: 1 },
    );
  });

  test('an automation step logs the emails it queued', async () => {
    const { type } = await typeWith(t.a, [['member@example.com', 'Member']]);
    const automation = await automationWith(t.a, {
      type: 'custom',
      target: `contacts_${type}`,
      group: await group(t.a, 'Automated'),
      sender: await verifiedSender(t, t.a),
      emails: [{ subject: 'First' }],
    });
    await act(t.a, '/automations/set-live', automation);
    await drain();
    const [step] = withMsg('automation step: emails queued');
    assert.equal(step?.automation, automation);
    assert.equal(step.stepped, 1);
    assert.deepEqual(Object.values(step.queued), [1]);
  });
});
