import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { crashSuite } from '../support/crash-suite.js';
import { freePort, startEntry, until } from '../support/processes.js';
import type { Database } from '../../src/db/index.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { newSecret } from '../../src/modules/webhooks/webhooks.service.js';
import { seal, WEBHOOK_SECRET } from '../../src/util/seal.js';
import { isoMicros } from '../../src/util/time.js';
import { assertSigned, emit, Receiver } from './webhooks.helpers.js';

const EVENTS = 1000;

describe('webhook events survive SIGKILL of the process delivering them', () => {
  let database: Database;
  let url: string;
  let dir: string;
  let receiver: Receiver | null = null;

  const suite = crashSuite('hooks');
  const children = suite.children;
  before(async () => {
    ({ database, url, dir } = suite);
  });
  after(async () => {
    await receiver?.close();
  });

  it('killed while its receiver is down and started again with it up: every event arrives', async () => {
    const { user_id } = await createAccount(database.db, 'Crash');
    const hookPort = await freePort();
    const secret = newSecret();
    const at = isoMicros(new Date());
    await database.db
      .insertInto('webhook_endpoints')
      .values({
        user_id,
        url: `http://127.0.0.1:${hookPort}/hook`,
        events: '["*"]',
        // Kept sealed with the app secret, as the API keeps it.
        secret: seal('test-secret', WEBHOOK_SECRET, secret),
        created_at: at,
        updated_at: at,
      })
      .execute();
    for (let i = 0; i < EVENTS; i += 10) await emit(database, user_id, 10);
    const eventIds = (await database.db.selectFrom('webhook_events').select('event_id').execute()).map((e) => e.event_id);
    assert.equal(eventIds.length, EVENTS);

    const env = { DATABASE_URL: url, DATA_DIR: dir, APP_SECRET: 'test-secret', LOG_LEVEL: 'info', WEBHOOKS_ALLOW_PRIVATE: '1' };
    const start = async () => {
      const c = startEntry('src/main.ts', { ...env, PORT: String(await freePort()) });
      children.push(c);
      return c;
    };
    const attempts = async () =>
      Number(
        (
          await database.db
            .selectFrom('webhook_attempts')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    // The receiver is down: the worker's first attempts fail; it is killed in the middle.
    const first = await start();
    assert.ok(await until(() => first.stdout.includes('webhooks lane started')), first.stdout);
    assert.ok(await until(async () => (await attempts()) >= 200, 120_000), 'attempts were made');
    first.proc.kill('SIGKILL');
    await first.exited;
    const delivered = await database.db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'delivered').execute();
    assert.equal(delivered.length, 0);

    receiver = await Receiver.start(hookPort);
    const second = await start();
    assert.ok(await until(() => receiver!.ids().size >= EVENTS, 120_000), `received ${receiver.ids().size} of ${EVENTS}\n${second.stdout}`);
    assert.deepEqual([...receiver.ids()].sort(), [...eventIds].sort());
    for (const r of receiver.received) assertSigned(r, secret);
    assert.ok(
      await until(async () => {
        const left = await database.db.selectFrom('webhook_deliveries').select('id').where('state', '!=', 'delivered').execute();
        return left.length === 0;
      }),
      'every delivery is marked delivered',
    );
  });
});
