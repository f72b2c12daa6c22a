/**
 * The leased queue (src/jobs/queue/) on the mail queue's table: claim, renew, release and settle
 * through the mail descriptor, on a real database. Only the lease holder writes a claimed row;
 * runners claiming at the same moment never take the same row.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Database } from '../../src/db/index.js';
import type { QueuedMessage } from '../../src/db/types.js';
import { MAIL_QUEUE } from '../../src/messages/mail.queue.js';
import { claim } from '../../src/jobs/queue/claim.js';
import { release } from '../../src/jobs/queue/release.js';
import { renew } from '../../src/jobs/queue/renew.js';
import { settle } from '../../src/jobs/queue/settle.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { testClock } from '../../src/util/clock.js';
import { isoMicros } from '../../src/util/time.js';
import { ENGINE, freshDatabase } from '../helpers.js';

describe('the leased queue on mail_messages', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let userId: number;
  const clock = testClock('2030-01-01T00:00:00.000Z');
  const LEASE = 60_000;

  before(async () => {
    ({ database, drop } = await freshDatabase());
    ({ user_id: userId } = await createAccount(database.db, 'Leases'));
  });
  after(() => drop());
  beforeEach(() => database.db.deleteFrom('mail_messages').execute());

  /** Queues `n` messages, due now (or `dueInMs` later), in order; returns their ids. */
  const queue = async (n: number, dueInMs = 0): Promise<number[]> => {
    const at = isoMicros(clock.now());
    const rows = await database.db
      .insertInto('mail_messages')
      .values(
        Array.from({ length: n }, (_, i) => ({
          user_id: userId,
          kind: 'test',
          email: `r${i}@example.com`,
          email_key: `r${i}@example.com`,
          next_attempt_at: isoMicros(new Date(clock.now().getTime() + dueInMs)),
          created_at: at,
          updated_at: at,
        })),
      )
      .returning('id')
      .execute();
    return rows.map((r) => Number(r.id));
  };
  const rowsOf = async (ids: number[]) =>
    (
      await database.db
        .selectFrom('mail_messages')
        .select(['id', 'state', 'lease_owner', 'next_attempt_at', 'message_id'])
        .where('id', 'in', ids)
        .orderBy('id')
        .execute()
    ).map((r) => ({ ...r, id: Number(r.id) }));
  const leaseEnd = (from: Date) => isoMicros(new Date(from.getTime() + LEASE));

  it('claims due rows, oldest first, as sending with the owner and the end of the lease; rows not due stay', async () => {
    const due = await queue(3);
    const later = await queue(1, 5_000);
    const claimed = await claim<QueuedMessage>(database.db, MAIL_QUEUE, 'runner-a', clock.now(), 2, LEASE);
    assert.deepEqual(
      claimed.map((r) => [r.id, r.state, r.lease_owner, r.next_attempt_at]),
      due.slice(0, 2).map((id) => [id, 'sending', 'runner-a', leaseEnd(clock.now())]),
    );
    const rest = await claim(database.db, MAIL_QUEUE, 'runner-b', clock.now(), 10, LEASE, 'id');
    assert.deepEqual(rest, [{ id: due[2] }], 'only ids asked for; the row not due yet stays');
    assert.deepEqual(
      (await rowsOf(later)).map((r) => r.state),
      ['queued'],
    );
    assert.deepEqual(await claim(database.db, MAIL_QUEUE, 'runner-c', clock.now(), 10, LEASE), [], 'held rows are not due');
  });

  it('renews only the leases its owner holds; a lease that ran out goes to another runner', async () => {
    const [a, b] = await queue(2);
    await claim(database.db, MAIL_QUEUE, 'runner-a', clock.now(), 1, LEASE);
    await claim(database.db, MAIL_QUEUE, 'runner-b', clock.now(), 1, LEASE);
    clock.advance(LEASE / 2);
    assert.equal(await renew(database.db, MAIL_QUEUE, 'runner-a', clock.now(), LEASE), 1);
    assert.deepEqual(
      (await rowsOf([a, b])).map((r) => [r.lease_owner, r.next_attempt_at]),
      [
        ['runner-a', leaseEnd(clock.now())],
        ['runner-b', leaseEnd(new Date(clock.now().getTime() - LEASE / 2))],
      ],
    );
    clock.advance(LEASE / 2);
    // Runner b's lease ran out: its row is due again and runner c takes it; runner a's was renewed.
    const taken = await claim(database.db, MAIL_QUEUE, 'runner-c', clock.now(), 10, LEASE);
    assert.deepEqual(
      taken.map((r) => r.id),
      [b],
    );
    assert.equal(await renew(database.db, MAIL_QUEUE, 'runner-b', clock.now(), LEASE), 0);
  });

  it('releases only what its owner holds: waiting again, due at once', async () => {
    const ids = await queue(3);
    await claim(database.db, MAIL_QUEUE, 'runner-a', clock.now(), 2, LEASE);
    await claim(database.db, MAIL_QUEUE, 'runner-b', clock.now(), 1, LEASE);
    clock.advance(1000);
    assert.equal(await release(database.db, MAIL_QUEUE, 'runner-a', clock.now(), ids), 2);
    assert.equal(await release(database.db, MAIL_QUEUE, 'runner-a', clock.now(), []), 0);
    assert.deepEqual(
      (await rowsOf(ids)).map((r) => [r.state, r.lease_owner, r.next_attempt_at]),
      [
        ['queued', null, isoMicros(clock.now())],
        ['queued', null, isoMicros(clock.now())],
        ['sending', 'runner-b', leaseEnd(new Date(clock.now().getTime() - 1000))],
      ],
    );
  });

  it('settles only the rows the settling runner holds: a non-holder changes nothing', async () => {
    const [a, b] = await queue(2);
    await claim(database.db, MAIL_QUEUE, 'runner-a', clock.now(), 2, LEASE);
    const before = await rowsOf([a, b]);
    const stranger = await settle(database.db, MAIL_QUEUE, 'runner-b', [a, b])
      .set({ state: 'sent', lease_owner: null, message_id: 'stranger@x' })
      .executeTakeFirst();
    assert.equal(Number(stranger.numUpdatedRows), 0);
    assert.deepEqual(await rowsOf([a, b]), before);

    const marked = await settle(database.db, MAIL_QUEUE, 'runner-a', a)
      .set({ state: 'sent', lease_owner: null, message_id: 'holder@x' })
      .returning(['id', 'state'])
      .execute();
    assert.deepEqual(
      marked.map((r) => [Number(r.id), r.state]),
      [[a, 'sent']],
    );
    // Settled once, the row is no longer held: a second mark by the same runner changes nothing.
    const again = await settle(database.db, MAIL_QUEUE, 'runner-a', [a]).set({ state: 'bounced', lease_owner: null }).executeTakeFirst();
    assert.equal(Number(again.numUpdatedRows), 0);
    // After its lease ran out and another runner claimed it, the first runner cannot settle b.
    clock.advance(LEASE);
    await claim(database.db, MAIL_QUEUE, 'runner-c', clock.now(), 10, LEASE);
    const late = await settle(database.db, MAIL_QUEUE, 'runner-a', [b]).set({ state: 'sent', lease_owner: null }).executeTakeFirst();
    assert.equal(Number(late.numUpdatedRows), 0);
    assert.deepEqual(
      (await rowsOf([a, b])).map((r) => [r.state, r.lease_owner, r.message_id]),
      [
        ['sent', null, 'holder@x'],
        ['sending', 'runner-c', null],
      ],
    );
    assert.equal(
      Number((await settle(database.db, MAIL_QUEUE, 'runner-a', []).set({ state: 'sent' }).executeTakeFirst()).numUpdatedRows),
      0,
    );
  });

  it(`runners claiming at the same moment never get the same row (${ENGINE})`, async () => {
    const ids = await queue(400);
    const owners = ['runner-1', 'runner-2', 'runner-3', 'runner-4'];
    const got = new Map(owners.map((o) => [o, [] as number[]]));
    // Every runner claims small batches, all at once, until nothing is left.
    await Promise.all(
      owners.map(async (owner) => {
        for (;;) {
          const rows = await claim(database.db, MAIL_QUEUE, owner, clock.now(), 7, LEASE, 'id');
          if (rows.length === 0) return;
          got.get(owner)!.push(...rows.map((r) => r.id));
        }
      }),
    );
    const all = [...got.values()].flat();
    assert.equal(all.length, ids.length, `${all.length} claims for ${ids.length} rows`);
    assert.deepEqual(
      [...new Set(all)].sort((x, y) => x - y),
      ids,
    );
    // Each row's owner is the runner that got it.
    const owned = await database.db.selectFrom('mail_messages').select(['id', 'lease_owner']).execute();
    for (const r of owned) assert.ok(got.get(r.lease_owner!)!.includes(Number(r.id)));
  });
});
