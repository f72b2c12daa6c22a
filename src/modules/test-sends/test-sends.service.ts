/**
 * Test sends: a single send's or an automation email's mail, sent at once to a few addresses with
 * its subject prefixed `[Test] `, through the same queue and renderer as the real mail (kind
 * `test`, see test-sends.kind.ts). Placeholders are filled from the contact `contact_id` names;
 * without it, from the account's contact with that address, else from the first recipient of the
 * send or automation email (test-sends.contact.ts). A test counts in no statistic and changes no status.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { NotFound, Rnf, type FieldErrors } from '../../http/errors.js';
import { Rules } from '../../http/messages.js';
import type { Principal } from '../../http/principal.js';
import { utrOf } from '../../http/schemas.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { enqueue } from '../../messages/messages.writes.js';
import { findSchedule } from '../automations/automations.queries.js';
import { checkMailSender } from '../senders/senders.service.js';
import { automationAudience, fillContactFor, sendAudience, type FillContact } from './test-sends.contact.js';
import { requireSend } from './test-sends.preview.js';
import type { TestAutomationEmailInput, TestPayload, TestSingleSendInput } from './test-sends.schema.js';
import { TEST_KIND } from './test-sends.kind.js';

/** Whose data fills the tests: the contact named (`chosen`: for every address) or the default (for addresses that are no contact). */
interface Fill {
  contact: FillContact | undefined;
  chosen: boolean;
}

/** The account's live contact ids by lower-cased address (the first one, when several types hold it). */
async function contactsByEmail(db: Db, userId: number, keys: string[]): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('contacts')
    .select(['id', 'email_key'])
    .where('user_id', '=', userId)
    .where('email_key', 'in', keys)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  const out = new Map<string, number>();
  for (const r of rows) if (!out.has(r.email_key)) out.set(r.email_key, r.id);
  return out;
}

/** Queues one test mail per address (each address once), in one transaction, and wakes the workers. */
async function queueTests(deps: AppDeps, userId: number, emails: string[], payload: TestPayload, fill: Fill): Promise<void> {
  const now = deps.clock.now();
  const byKey = new Map(emails.map((e) => [e.trim().toLowerCase(), e.trim()]));
  await deps.database.db.transaction().execute(async (trx) => {
    const contacts = await contactsByEmail(trx, userId, [...byKey.keys()]);
    await enqueue(
      trx,
      [...byKey].map(([key, email]) => {
        const own = contacts.get(key);
        // The row's contact stays the address's own (an unsubscribe from the test is that address's); the data may be another's.
        const filled = fill.contact && (fill.chosen || own === undefined) ? { ...payload, fill_contact_id: fill.contact.id } : payload;
        return { user_id: userId, kind: TEST_KIND, contact_id: own ?? null, email, email_key: key, payload: JSON.stringify(filled) };
      }),
      now,
    );
    await wakeWorkers(trx);
  });
}

/** `POST /single/send/test`: the send's mail to each address; its sender must still be verified. */
export async function testSingleSend(
  deps: AppDeps,
  principal: Principal,
  input: TestSingleSendInput,
  schemaFailures: FieldErrors,
): Promise<void> {
  const userId = principal.account;
  const rules = new Rules(schemaFailures);
  if (rules.failed('utr')) rules.done();
  const send = await requireSend(deps, userId, input.utr);
  await checkMailSender(deps, userId, send.sender_id, rules);
  const contact = await fillContactFor(deps.database.db, principal, input.contact_id, rules, async () => sendAudience(send));
  rules.done();
  await queueTests(deps, userId, input.emails, { single_send_id: send.id }, { contact, chosen: input.contact_id !== undefined });
}

/** `POST /automations/schedule/test`: one automation email to each address; its sender must still be verified. */
export async function testAutomationEmail(
  deps: AppDeps,
  principal: Principal,
  input: TestAutomationEmailInput,
  schemaFailures: FieldErrors,
): Promise<void> {
  const userId = principal.account;
  const rules = new Rules(schemaFailures);
  if (rules.failed('utr')) rules.done();
  const utr = utrOf(input.utr);
  const email = utr ? await findSchedule(deps.database.db, userId, utr) : undefined;
  if (!email) throw new NotFound(Rnf);
  await checkMailSender(deps, userId, email.sender_id, rules);
  const { db } = deps.database;
  const contact = await fillContactFor(db, principal, input.contact_id, rules, () => automationAudience(db, userId, email.automation_id));
  rules.done();
  await queueTests(deps, userId, input.emails, { automation_schedule_id: email.id }, { contact, chosen: input.contact_id !== undefined });
}
