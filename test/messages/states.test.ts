import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';
import { testClock } from '../../src/util/clock.js';
import { IllegalTransition, MAIL_STATES, MOVES, move } from '../../src/messages/messages.states.js';
import { moveMessages } from '../../src/messages/messages.writes.js';
import { insertSingleSend, queueSendMessage, rowOf } from './queue.helpers.js';

describe('the states of a message', () => {
  it('lists a move for every state, only to states it knows; the final states move nowhere', () => {
    assert.deepEqual(Object.keys(MOVES).sort(), [...MAIL_STATES].sort());
    for (const to of Object.values(MOVES).flat()) assert.ok(MAIL_STATES.includes(to), to);
    for (const final of ['bounced', 'suppressed', 'cancelled'] as const) assert.deepEqual(MOVES[final], []);
  });

  it('refuses a move it does not list, and names it', () => {
    assert.deepEqual(move(['queued', 'held'], 'cancelled'), ['queued', 'held']);
    assert.throws(() => move(['sent'], 'queued'), IllegalTransition);
    assert.throws(() => move(['held', 'cancelled'], 'queued'), /from cancelled to queued/);
    assert.throws(() => move(['bounced'], 'sent'), IllegalTransition);
  });
});

describe('a write asking for an illegal move', () => {
  const clock = testClock('2030-01-01T00:00:00.000Z');
  let t: TestContext;
  before(async () => {
    t = await setup({}, { clock });
  });
  after(() => t.close());

  it('is refused before it writes: the message keeps its state', async () => {
    const db = t.database.db;
    const userId = t.a.keys!.user_id;
    const sendId = await insertSingleSend(db, userId);
    const id = await queueSendMessage(db, userId, sendId, 'moved@example.com', clock.now());
    await db.updateTable('mail_messages').set({ state: 'sent' }).where('id', '=', id).execute();
    await assert.rejects(
      moveMessages(db, { single_send_id: [sendId] }, { from: ['sent'], to: 'queued', now: clock.now() }),
      IllegalTransition,
    );
    assert.equal((await rowOf(db, 'moved@example.com')).state, 'sent');
    // A legal move of the same write goes through, from the states it names only.
    assert.equal(await moveMessages(db, { single_send_id: [sendId] }, { from: ['queued'], to: 'cancelled', now: clock.now() }), 0);
    await db.updateTable('mail_messages').set({ state: 'queued' }).where('id', '=', id).execute();
    assert.equal(await moveMessages(db, { single_send_id: [sendId] }, { from: ['queued'], to: 'cancelled', now: clock.now() }), 1);
    assert.equal((await rowOf(db, 'moved@example.com')).state, 'cancelled');
  });
});
