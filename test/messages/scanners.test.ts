/**
 * The rules that find scanners' clicks (`judgeClicks`, at their thresholds), and scanners' clicks
 * of an automation email through the ledger: nothing of people's engagement moves.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/index.js';
import { record, TRAP_LINK } from '../../src/messages/ledger.js';
import { BURST_WINDOW_MS, judgeClicks, TRAP_WINDOW_MS } from '../../src/messages/scanners.js';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { isoMicros } from '../../src/util/time.js';
import { addEndpoint, eventsSince, lastEventId } from '../events/events.helpers.js';
import { freshDatabase } from '../helpers.js';
import { seedAutomationEmail } from '../public/seed.js';

describe('judgeClicks: the rules on one message’s clicks', () => {
  const seen = (id: number, link: number, at: number, bot = false) => ({ id, link, at, bot });
  const fresh = (link: number, at: number, scanner = false) => ({ link, at, scanner });

  it('two different links within 2 s (inclusive) are both a scanner’s; 2.001 s apart, or the same link twice, a person’s', () => {
    assert.deepEqual(judgeClicks([seen(1, 5, 0)], [fresh(6, BURST_WINDOW_MS)]), { bot: [true], moved: [1] });
    assert.deepEqual(judgeClicks([seen(1, 5, 0)], [fresh(6, BURST_WINDOW_MS + 1)]), { bot: [false], moved: [] });
    assert.deepEqual(judgeClicks([seen(1, 5, 0)], [fresh(5, 100)]), { bot: [false], moved: [] });
    assert.deepEqual(judgeClicks([], [fresh(5, 0), fresh(6, 0)]), { bot: [true, true], moved: [] });
  });

  it('the trap link, and every click within 60 s (inclusive) before or after it, are a scanner’s', () => {
    assert.deepEqual(judgeClicks([], [fresh(TRAP_LINK, 0)]), { bot: [true], moved: [] });
    assert.deepEqual(judgeClicks([seen(1, 5, 0), seen(2, 5, -1)], [fresh(TRAP_LINK, TRAP_WINDOW_MS)]), { bot: [true], moved: [1] });
    assert.deepEqual(judgeClicks([seen(1, TRAP_LINK, 0, true)], [fresh(5, TRAP_WINDOW_MS)]), { bot: [true], moved: [] });
    assert.deepEqual(judgeClicks([seen(1, TRAP_LINK, 0, true)], [fresh(5, TRAP_WINDOW_MS + 1)]), { bot: [false], moved: [] });
  });

  it('an agent’s scanner is a scanner; a scanner’s click is never moved back to people', () => {
    assert.deepEqual(judgeClicks([], [fresh(5, 0, true)]), { bot: [true], moved: [] });
    assert.deepEqual(judgeClicks([seen(1, 6, 0, true)], [fresh(5, 500)]), { bot: [true], moved: [] });
  });
});

describe('scanner clicks of an automation email: no engagement', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let userId: number;
  let automationId: number;
  let messageId: number;
  let linkId: number;
  const now = new Date('2031-03-01T08:00:00Z');

  before(async () => {
    ({ database, drop } = await freshDatabase());
    ({ user_id: userId } = await createAccount(database.db, 'Scanners'));
    const utr = await seedAutomationEmail(database.db, userId);
    const email = await database.db
      .selectFrom('automation_schedules')
      .select(['id', 'automation_id'])
      .where('utr', '=', utr)
      .executeTakeFirstOrThrow();
    automationId = email.automation_id;
    const at = isoMicros(now);
    const message = await database.db
      .insertInto('mail_messages')
      .values({
        user_id: userId,
        kind: 'automation',
        single_send_id: null,
        automation_id: automationId,
        automation_schedule_id: email.id,
        contact_id: null,
        email: 'reader@example.com',
        email_key: 'reader@example.com',
        payload: null,
        state: 'sent',
        next_attempt_at: at,
        lease_owner: null,
        last_error: null,
        message_id: 'm1@example.test',
        sent_at: at,
        first_opened_at: null,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    messageId = message.id;
    const links = await database.db
      .insertInto('tracked_links')
      .values(
        [0, 1].map((position) => ({
          user_id: userId,
          source_table: 'automations',
          source_id: automationId,
          campaign_table: 'automation_schedules',
          campaign_id: email.id,
          position,
          url: `https://shop.example.com/${position}`,
          created_at: at,
        })),
      )
      .returning('id')
      .execute();
    linkId = links[0].id;
    await addEndpoint(database, userId);
  });
  after(() => drop());

  it('counts in total_bot_clicks only: no clicks, no open, no person, no message.clicked', async () => {
    const since = await lastEventId(database);
    const click = (link: number, scanner: boolean, at: Date) =>
      database.db
        .transaction()
        .execute((trx) =>
          record(trx, { kinds: MAIL_KINDS, now: at }, [
            { type: 'clicked', id: messageId, link, url: 'https://shop.example.com/', scanner },
          ]),
        );
    await click(linkId, true, now);
    await click(TRAP_LINK, false, new Date(now.getTime() + 5000));
    await click(linkId + 1, false, new Date(now.getTime() + 20_000));
    const automation = await database.db
      .selectFrom('automations')
      .select(['total_clicks', 'total_unique_clicks', 'total_opens', 'total_unique_opens', 'total_unique_human_opens', 'total_bot_clicks'])
      .where('id', '=', automationId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(automation, {
      total_clicks: 0,
      total_unique_clicks: 0,
      total_opens: 0,
      total_unique_opens: 0,
      total_unique_human_opens: 0,
      total_bot_clicks: 3,
    });
    const m = await database.db
      .selectFrom('mail_messages')
      .select(['clicks', 'bot_clicks', 'opens', 'last_human_clicked_at', 'last_human_opened_at'])
      .where('id', '=', messageId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(m, { clicks: 0, bot_clicks: 3, opens: 0, last_human_clicked_at: null, last_human_opened_at: null });
    assert.deepEqual(await eventsSince(database, since, 'message.clicked'), []);
    const hours = await database.db.selectFrom('engagement_hours').selectAll().where('source_table', '=', 'automations').execute();
    assert.ok(hours.every((h) => Number(h.clicks) === 0 && Number(h.opens) === 0));
  });
});
