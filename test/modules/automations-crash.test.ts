import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { crashSuite } from '../support/crash-suite.js';
import { freePort, startEntry, until } from '../support/processes.js';
import { SmtpSink } from '../support/smtp-sink.js';
import type { Database } from '../../src/db/index.js';
import { createAccount, type IssuedKeys } from '../../src/modules/accounts/accounts.service.js';
import { isoMicros } from '../../src/util/time.js';
import { senderForm } from './senders.helpers.js';

const PEOPLE = 1200;

async function countState(database: Database, state: 'sent' | 'sending'): Promise<number> {
  const row = await database.db
    .selectFrom('mail_messages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('kind', '=', 'automation')
    .where('state', '=', state)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('an automation survives SIGKILL of the process sending it', () => {
  let database: Database;
  let url: string;
  let sink: SmtpSink;
  let dir: string;
  let keys: IssuedKeys;

  const suite = crashSuite('auto');
  const children = suite.children;
  before(async () => {
    ({ database, url, dir } = suite);
    keys = await createAccount(database.db, 'Crash');
    sink = await SmtpSink.start();
  });
  after(async () => {
    await sink.close();
  });

  it('killed mid-sequence and started again: every address gets each email, duplicates within the in-flight window', async (t) => {
    const port = await freePort();
    const env = { DATABASE_URL: url, SMTP_URL: sink.url, DATA_DIR: dir, APP_SECRET: 'test-secret', PORT: String(port), LOG_LEVEL: 'info' };
    const start = () => {
      const c = startEntry('src/main.ts', env);
      children.push(c);
      return c;
    };
    const call = async (method: string, path: string, body?: Record<string, unknown> | FormData) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: {
          PublicKey: keys.public_key,
          SecretKey: keys.secret_key,
          ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
        },
        body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
      });
      const json = await r.json();
      assert.equal(r.status, 200, JSON.stringify(json));
      return json;
    };
    const first = start();
    assert.ok(await until(() => first.stdout.includes('mail lane started')), first.stdout);
    const window: number = JSON.parse(first.stdout.split('\n').find((l) => l.includes('mail lane started'))!).inFlightWindow;

    const type = await call('POST', '/contacts-type/add', { name: 'Crash list' });
    const form = new FormData();
    form.append('contact_type_id', String(type.id));
    const csv = ['email,first_name,last_name,country', ...Array.from({ length: PEOPLE }, (_, i) => `p${i}@example.com,P${i},Doe,101`)];
    form.append('file', new Blob([csv.join('\n')], { type: 'text/csv' }), 'people.csv');
    await call('POST', '/contacts/upload-csv', form);
    const sender = await call('POST', '/sender/save', senderForm());
    await database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', sender.id).execute();
    const group = await call('POST', '/unsubscribes-groups/save', { group_name: 'News', description: 'News', is_display: 1 });
    const utr: string = (
      await call('POST', '/automations/create', {
        type: 'custom',
        automation_for: `contacts_${type.id}`,
        automation_name: 'Crash',
        unsubscribe_group_id: group.id,
      })
    ).message.utr;
    for (const subject of ['One', 'Two'])
      await call('POST', '/automations/schedule/create', {
        utr,
        sender_id: sender.id,
        subject,
        waiting_period: 1,
        waiting_type: 'instantly',
        template_id: 1,
        preview_img: 'blank.png',
        template_html: `<p>${subject} for ((first_name))</p>`,
      });
    sink.delayMs = 5;
    await call('GET', `/automations/set-live?utr=${utr}`);
    // Killed mid-sequence: some mail arrived and the worker holds claimed rows.
    assert.ok(await until(async () => sink.messages.length >= 500 && (await countState(database, 'sending')) > 0), 'the worker is sending');
    first.proc.kill('SIGKILL');
    await first.exited;
    const received = sink.messages.length;
    // The dead worker's leases would end within a minute; the test ends them now rather than waiting.
    await database.db
      .updateTable('mail_messages')
      .set({ next_attempt_at: isoMicros(new Date()) })
      .where('state', '=', 'sending')
      .execute();
    sink.delayMs = 0;
    const second = start();
    assert.ok(
      await until(() => countState(database, 'sent').then((n) => n === 2 * PEOPLE)),
      `sent after restart (${second.stdout.slice(-2000)})`,
    );

    const got = new Map<string, number>();
    for (const m of sink.messages) for (const to of m.envelope.to) got.set(`${to} ${m.subject}`, (got.get(`${to} ${m.subject}`) ?? 0) + 1);
    const wanted = Array.from({ length: PEOPLE }, (_, i) => [`p${i}@example.com One`, `p${i}@example.com Two`]).flat();
    const missed = wanted.filter((k) => !got.has(k)).length;
    const duplicates = [...got.values()].reduce((sum, n) => sum + n - 1, 0);
    t.diagnostic(`killed after ${received} received; duplicates ${duplicates}, in-flight window ${window}`);
    assert.equal(missed, 0);
    assert.ok(duplicates <= window, `${duplicates} duplicates, in-flight window ${window}`);
    const totals = await database.db
      .selectFrom('automations')
      .select(['total_triggered', 'total_delivered'])
      .where('utr', '=', utr)
      .executeTakeFirstOrThrow();
    assert.deepEqual(totals, { total_triggered: 2 * PEOPLE, total_delivered: 2 * PEOPLE });
    second.proc.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
