import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createDb, type Database } from '../../src/db/index.js';
import { ACCOUNTS_CHANNEL } from '../../src/db/accounts-watch.js';
import { createListener, LISTENER_APP } from '../../src/db/listener.js';
import { ENGINE, freshDatabase } from '../helpers.js';

/** Waits (up to six seconds) until `ok()` holds, then asserts it: notifications cross a socket. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok());
}

describe('the PostgreSQL listener', { skip: ENGINE !== 'postgres' && 'PostgreSQL only' }, () => {
  let database: Database;
  let url: string;
  let drop: () => Promise<void>;
  before(async () => {
    ({ database, url, drop } = await freshDatabase());
  });
  after(() => drop());

  const notify = (channel: string, payload = '') => sql`select pg_notify(${channel}, ${payload})`.execute(database.db);
  const listeners = async () =>
    Number(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where application_name = ${LISTENER_APP} and datname = current_database()`.execute(
          database.db,
        )
      ).rows[0].n,
    );

  it('is the one listening connection of a server database, and there is none without `server`', async () => {
    assert.ok(database.listener);
    await until(() => database.listener!.isListening());
    assert.equal(await listeners(), 1);
    const plain = createDb(url);
    try {
      assert.equal(plain.listener, undefined);
      assert.equal(plain.version, undefined);
    } finally {
      await plain.close();
    }
  });

  it('delivers payloads to every subscriber of a channel, and only of that channel', async () => {
    const got: string[] = [];
    const other: string[] = [];
    const stopA = database.listener!.listen('campaign_test_wake', (p) => got.push(`a:${p}`));
    const stopB = database.listener!.listen('campaign_test_wake', (p) => got.push(`b:${p}`));
    const stopOther = database.listener!.listen('campaign_test_other', (p) => other.push(p ?? ''));
    await until(() => database.listener!.isListening());
    await notify('campaign_test_wake', 'batch-1');
    await until(() => got.length === 2);
    assert.deepEqual(got.sort(), ['a:batch-1', 'b:batch-1']);
    stopA();
    await notify('campaign_test_wake', 'batch-2');
    await until(() => got.length === 3);
    assert.equal(got[2], 'b:batch-2');
    assert.deepEqual(other, []);
    stopB();
    stopOther();
    assert.equal(await listeners(), 1, 'still one connection for all channels');
  });

  it('moves the accounts version on the accounts channel only', async () => {
    const version = database.version!;
    await until(() => version() !== undefined);
    const before = version();
    await notify('campaign_test_other', 'x');
    // A notification on the accounts channel sent after it arrives after it: once that one moved
    // the version, the other would have too.
    await notify(ACCOUNTS_CHANNEL, 'x');
    await until(() => version() !== before);
    assert.equal(version(), before! + 1);
  });

  it('refuses a channel name that would need quoting', () => {
    for (const bad of ['Upper', 'semi;colon', '', 'a b', '1abc']) {
      assert.throws(() => database.listener!.listen(bad, () => undefined), /not a plain channel name/, bad);
    }
  });

  it('counts a lost connection, connects again and listens on every channel again', async () => {
    const listener = database.listener!;
    const got: string[] = [];
    listener.listen('campaign_test_again', (p) => got.push(p ?? ''));
    await until(() => listener.isListening());
    const losses = listener.losses();
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${LISTENER_APP} and datname = current_database()`.execute(
      database.db,
    );
    await until(() => !listener.isListening());
    assert.equal(listener.losses(), losses + 1);
    await until(() => listener.isListening());
    await notify('campaign_test_again', 'after');
    await until(() => got.length === 1);
    assert.deepEqual(got, ['after']);
  });

  it('closes: no connection left, not listening', async () => {
    const own = createListener(url);
    await until(() => own.isListening());
    assert.equal(await listeners(), 2);
    await own.close();
    assert.equal(own.isListening(), false);
    // The server ends the backend a moment after the client's goodbye.
    let left = await listeners();
    for (let i = 0; i < 100 && left !== 1; i++) left = await new Promise((r) => setTimeout(r, 10)).then(listeners);
    assert.equal(left, 1);
  });
});
