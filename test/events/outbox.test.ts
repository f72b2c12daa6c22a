import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { emitEvents, type OutgoingEvent } from '../../src/events/outbox.js';
import { setup, type TestContext } from '../helpers.js';
import { addEndpoint } from './events.helpers.js';

describe('emitEvents', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  test('writes a batch of 1,000 events to 12 endpoints (12,000 deliveries) in one transaction', async () => {
    const userId = t.a.keys!.user_id;
    for (let i = 0; i < 12; i++) await addEndpoint(t.database, userId);
    const events: OutgoingEvent[] = Array.from({ length: 1000 }, (_, i) => ({
      userId,
      type: 'message.opened',
      data: { email: `reader${i}@example.com` },
      email: `Reader${i}@example.com`,
    }));
    const written = await t.database.db.transaction().execute((trx) => emitEvents(trx, new Date(), events));
    assert.equal(written, 1000);
    const stored = await t.database.db.selectFrom('webhook_events').select(['id', 'email_key']).orderBy('id').execute();
    assert.equal(stored.length, 1000);
    assert.equal(stored[999].email_key, 'reader999@example.com');
    const deliveries = await t.database.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(deliveries.n), 12_000);
    // Each delivery names a stored event of its account.
    const orphans = await t.database.db
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select('d.id')
      .where((eb) => eb.or([eb('e.id', 'is', null), eb('e.user_id', '!=', eb.ref('d.user_id'))]))
      .execute();
    assert.deepEqual(orphans, []);
  });
});
