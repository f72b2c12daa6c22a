import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import { createOpenBatches } from '../../src/public/open-batches.js';
import { freshDatabase } from '../helpers.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import type { Database } from '../../src/db/index.js';
import { seedSingleSend, type SeededSend } from './seed.js';

describe("counting opens in batches (the pixel's group commit)", () => {
  let database: Database;
  let drop: () => Promise<void>;
  let send: SeededSend;
  before(async () => {
    ({ database, drop } = await freshDatabase());
    const { user_id } = await createAccount(database.db, 'Opens');
    send = await seedSingleSend(
      database.db,
      user_id,
      Array.from({ length: 20 }, (_, i) => `r${i}@example.com`),
    );
  });
  after(() => drop());

  const stats = (id: number) =>
    database.db.selectFrom('single_sends').select(['total_opens', 'unique_opens']).where('id', '=', id).executeTakeFirstOrThrow();
  const opensOf = async (ids: number[]) =>
    (await database.db.selectFrom('mail_messages').select(['id', 'opens']).where('id', 'in', ids).orderBy('id').execute()).map(
      (r) => r.opens,
    );
  const now = new Date('2031-01-01T00:00:00Z');

  it('shares transactions between opens that arrive together, and counts every one exactly', async () => {
    let batches = 0;
    const opens = createOpenBatches(database.db, MAIL_KINDS, { now: () => (batches++, now) });
    const ids = send.messageIds.slice(2, 12); // 10 messages never opened
    const before = await stats(send.sendId);
    await Promise.all(Array.from({ length: 200 }, (_, i) => opens.count(ids[i % ids.length])));
    assert.ok(batches >= 1 && batches < 20, `${batches} transactions for 200 opens`);
    assert.deepEqual(
      await opensOf(ids),
      ids.map(() => 20),
    );
    const after = await stats(send.sendId);
    assert.equal(after.total_opens - before.total_opens, 200);
    assert.equal(after.unique_opens - before.unique_opens, 10);
  });

  it('waits one turn of the event loop before a batch: an open received meanwhile joins it', async () => {
    let batches = 0;
    const opens = createOpenBatches(database.db, MAIL_KINDS, { now: () => (batches++, now) });
    const [a, b] = send.messageIds;
    // Queued before the first count starts its batch, as a request parsed in the same turn would be.
    const late = new Promise<void>((done, fail) => setImmediate(() => opens.count(b).then(done, fail)));
    await Promise.all([opens.count(a), late]);
    assert.equal(batches, 1, `${batches} transactions for two opens of one turn`);
  });

  it('counts one unique open when two counters (two processes) race on the same first opens', async () => {
    const ids = send.messageIds.slice(12, 20);
    const one = createOpenBatches(database.db, MAIL_KINDS, { now: () => now });
    const two = createOpenBatches(database.db, MAIL_KINDS, { now: () => now });
    const before = await stats(send.sendId);
    await Promise.all(ids.flatMap((id) => [one.count(id), two.count(id), one.count(id), two.count(id)]));
    const after = await stats(send.sendId);
    assert.equal(after.total_opens - before.total_opens, ids.length * 4);
    assert.equal(after.unique_opens - before.unique_opens, ids.length);
  });
});
