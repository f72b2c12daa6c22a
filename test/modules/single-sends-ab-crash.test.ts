import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINE } from '../helpers.js';
import { crashSuite } from '../support/crash-suite.js';
import { freePort, startEntry, until, type Child } from '../support/processes.js';
import { SmtpSink } from '../support/smtp-sink.js';
import type { Database } from '../../src/db/index.js';
import { createAccount, type IssuedKeys } from '../../src/modules/accounts/accounts.service.js';
import { QUEUE_CHANNEL } from '../../src/messages/mail.queue.js';
import { isoMicros } from '../../src/util/time.js';
import { senderForm } from './senders.helpers.js';

const PEOPLE = 1200;
const SUBJECTS = ['Subject A', 'Subject B'];

describe('an A/B test survives SIGKILL of the process sending it, at each phase', () => {
  let database: Database;
  let url: string;
  let sink: SmtpSink;
  let dir: string;
  let keys: IssuedKeys;

  const suite = crashSuite('ab');
  const children = suite.children;
  before(async () => {
    ({ database, url, dir } = suite);
    keys = await createAccount(database.db, 'Crash');
    sink = await SmtpSink.start();
  });
  after(async () => {
    await sink.close();
  });

  const send = () => database.db.selectFrom('single_sends').selectAll().executeTakeFirstOrThrow();
  const count = async (states: string[]) => {
    const row = await database.db
      .selectFrom('mail_messages')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('kind', '=', 'single_send')
      .where('state', 'in', states as never[])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  /** The dead process's leases would end within a minute; the test ends them now rather than waiting. */
  const endLeases = () =>
    database.db
      .updateTable('mail_messages')
      .set({ next_attempt_at: isoMicros(new Date()) })
      .where('state', '=', 'sending')
      .execute();
  /** Mail received per address, by subject. */
  const tally = () => {
    const got = new Map<string, string[]>();
    for (const m of sink.messages) for (const to of m.envelope.to) got.set(to, [...(got.get(to) ?? []), m.subject]);
    return got;
  };

  it('killed while the test share is sent, while it waits, and while the winner is sent: each address one variant, none missed', async (t) => {
    const port = await freePort();
    const env = { DATABASE_URL: url, SMTP_URL: sink.url, DATA_DIR: dir, APP_SECRET: 'test-secret', PORT: String(port), LOG_LEVEL: 'info' };
    const start = async () => {
      const c = startEntry('src/main.ts', env);
      children.push(c);
      assert.ok(await until(() => c.stdout.includes('mail lane started')), c.stdout);
      return c;
    };
    const kill = async (c: Child) => {
      c.proc.kill('SIGKILL');
      await c.exited;
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

    let server = await start();
    const window: number = JSON.parse(server.stdout.split('\n').find((l) => l.includes('mail lane started'))!).inFlightWindow;
    const type = await call('POST', '/contacts-type/add', { name: 'Crash list' });
    const form = new FormData();
    form.append('contact_type_id', String(type.id));
    const csv = ['email,first_name,last_name,country', ...Array.from({ length: PEOPLE }, (_, i) => `p${i}@example.com,P${i},Doe,101`)];
    form.append('file', new Blob([csv.join('\n')], { type: 'text/csv' }), 'people.csv');
    await call('POST', '/contacts/upload-csv', form);
    const sender = await call('POST', '/sender/save', senderForm());
    await database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', sender.id).execute();
    const group = await call('POST', '/unsubscribes-groups/save', { group_name: 'News', description: 'News', is_display: 1 });
    sink.delayMs = 20;
    const { utr } = (
      await call('POST', '/single/send/create', {
        template_id: 1,
        template_html: '<p>Hello ((first_name))</p>',
        sender_id: sender.id,
        unsubscribe_group_id: group.id,
        single_send_name: 'Crash test',
        subject: SUBJECTS[0],
        preheader: 'Which one',
        recipient_id: [`contacts_${type.id}`],
        schedule_type: 0,
        ab_test: 1,
        ab_test_percent: 30,
        ab_winner_metric: 'opens',
        ab_wait_minutes: 1,
        variants: [{ subject: SUBJECTS[1] }],
      })
    ).message;
    const share = Math.round((PEOPLE * 30) / 100);

    // 1. Killed while the test share goes out: some of it arrived, the process holds claimed rows.
    assert.ok(await until(async () => sink.messages.length >= 60 && (await count(['sending'])) > 0), 'the share is being sent');
    await kill(server);
    t.diagnostic(`killed during the share after ${sink.messages.length} received`);
    await endLeases();
    server = await start();
    assert.ok(await until(async () => (await send()).ab_wait_ends_at !== null), 'the share went out after the restart');
    const waiting = await send();
    assert.deepEqual([waiting.status, waiting.triggered, waiting.ab_winner], [2, share, null]);
    const shareDuplicates = sink.messages.length - share;
    assert.ok(shareDuplicates >= 0 && shareDuplicates <= window, `${shareDuplicates} duplicates, in-flight window ${window}`);

    // 2. Killed while it waits: nothing is in flight, so nothing may be lost or doubled.
    await kill(server);
    const before = sink.messages.length;
    server = await start();
    assert.equal((await send()).ab_winner, null);
    assert.equal(sink.messages.length, before);
    // The wait ends now rather than in a minute (the server's clock is the real one).
    await database.db
      .updateTable('single_sends')
      .set({ ab_wait_ends_at: isoMicros(new Date()) })
      .execute();
    if (ENGINE === 'postgres') await sql`select pg_notify(${QUEUE_CHANNEL}, '')`.execute(database.db);

    // 3. Killed while the winner goes to the rest.
    assert.ok(
      await until(async () => sink.messages.length >= before + 200 && (await count(['sending'])) > 0),
      `the winner is being sent (${server.stdout.slice(-2000)})`,
    );
    await kill(server);
    t.diagnostic(`killed during the winner's send after ${sink.messages.length} received`);
    await endLeases();
    sink.delayMs = 0;
    server = await start();
    assert.ok(await until(async () => (await send()).status === 3), `completed after the restart (${server.stdout.slice(-2000)})`);

    const done = await send();
    assert.deepEqual([done.triggered, done.delivered, done.ab_winner], [PEOPLE, PEOPLE, 0]);
    const got = tally();
    const rows = await database.db
      .selectFrom('mail_messages')
      .select(['email_key', 'ab_variant'])
      .where('kind', '=', 'single_send')
      .execute();
    assert.equal(rows.length, PEOPLE, 'one message per recipient');
    const missed = rows.filter((r) => !got.has(r.email_key)).length;
    const duplicates = [...got.values()].reduce((n, s) => n + s.length - 1, 0);
    t.diagnostic(`duplicates ${duplicates} over two crashes while sending, in-flight window ${window}`);
    assert.equal(missed, 0);
    assert.ok(duplicates <= 2 * window, `${duplicates} duplicates, in-flight window ${window}`);
    for (const r of rows) {
      const subjects = new Set(got.get(r.email_key));
      assert.deepEqual([...subjects], [SUBJECTS[r.ab_variant ?? 0]], `${r.email_key}: one variant, its own`);
    }
    const shown = (await call('GET', `/single-send/details?utr=${utr}`)).message.singleSend[0];
    assert.deepEqual([shown.status, shown.ab_winner, shown.triggered], [3, 0, PEOPLE]);
    server.proc.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });
});
