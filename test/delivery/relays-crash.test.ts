import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../src/db/index.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { isoMicros } from '../../src/util/time.js';
import { ENGINE, freshDatabase } from '../helpers.js';
import { queueSystemMails } from '../messages/queue.helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { startEntry, until, type Child } from '../support/processes.js';

describe('a worker killed while relays throttle', { skip: ENGINE !== 'postgres' && 'worker processes need PostgreSQL' }, () => {
  let database: Database;
  let drop: () => Promise<void>;
  let throttling: SmtpSink;
  let slow: SmtpSink;
  let dir: string;
  let env: Record<string, string>;
  const children: Child[] = [];

  before(async () => {
    let url: string;
    ({ database, drop, url } = await freshDatabase());
    [throttling, slow] = [await SmtpSink.start(), await SmtpSink.start()];
    dir = mkdtempSync(join(tmpdir(), 'campaign-relays-'));
    env = { DATABASE_URL: url, SMTP_URL: `${throttling.url},${slow.url}`, DATA_DIR: dir, APP_SECRET: 'test-secret', LOG_LEVEL: 'info' };
  });
  after(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await Promise.all([throttling.close(), slow.close()]);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = async (state: string) =>
    Number(
      (
        await database.db
          .selectFrom('mail_messages')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('state', '=', state as 'sent')
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('SIGKILL mid-send: every mail arrives, duplicates within the in-flight window, none bounced, no attempt used', async (t) => {
    const userId = (await createAccount(database.db, 'Relays')).user_id;
    const emails = await queueSystemMails(database.db, userId, 600, new Date(), 'crash');
    throttling.reject(/./, 421);
    slow.delayMs = 20;
    const victim = startEntry('src/worker.ts', env);
    children.push(victim);
    assert.ok(await until(async () => slow.messages.length >= 100 && (await count('sending')) > 0), 'the worker is sending');
    assert.match(victim.stdout, /relay paused/);
    victim.proc.kill('SIGKILL');
    await victim.exited;
    const window = JSON.parse(victim.stdout.split('\n').find((l) => l.includes('mail lane started'))!).inFlightWindow;
    // The dead worker's leases would end within a minute; the test ends them now.
    await database.db
      .updateTable('mail_messages')
      .set({ next_attempt_at: isoMicros(new Date()) })
      .where('state', '=', 'sending')
      .execute();
    throttling.acceptAll();
    slow.delayMs = 0;
    const successor = startEntry('src/worker.ts', env);
    children.push(successor);
    assert.ok(await until(async () => (await count('sent')) === 600), 'the successor finishes');
    const got = new Map<string, number>();
    for (const m of [...throttling.messages, ...slow.messages]) for (const to of m.envelope.to) got.set(to, (got.get(to) ?? 0) + 1);
    const missed = emails.filter((e) => !got.has(e)).length;
    const duplicates = [...got.values()].reduce((n, c) => n + c - 1, 0);
    t.diagnostic(`duplicates ${duplicates}, in-flight window ${window}; via the throttling relay ${throttling.messages.length}`);
    assert.equal(missed, 0);
    assert.ok(duplicates <= window, `${duplicates} duplicates, window ${window}`);
    const attempts = await database.db.selectFrom('mail_messages').select('attempts').where('attempts', '>', 0).execute();
    assert.equal(attempts.length, 0, 'throttling used no attempt');
    assert.equal(await count('bounced'), 0);
    successor.proc.kill('SIGTERM');
    assert.equal(await successor.exited, 0);
  });
});
