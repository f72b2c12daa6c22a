import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { queryListSource } from '../../http/list-source.js';
import { enqueueSystemMail } from '../notifications/notifications.mail.js';
import { senderAddress } from '../../delivery/placeholders.js';
import { AppError, NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { isoMicros, sqlDateTime } from '../../util/time.js';
import { cityById, countryById, stateById } from '../../reference/geo.js';
import { enqueueEvent } from '../notifications/notifications.events.js';
import { readVerificationToken, verificationMail } from './senders.mail.js';
import {
  claimVerificationSlot,
  findSender,
  findSenderForVerification,
  findVerifiedSender,
  insertSender,
  markSenderVerified,
  selectSenders,
  softDeleteSender,
  updateSenderRow,
} from './senders.queries.js';
import { toSender, type SenderInput, type SenderRow } from './senders.schema.js';

/** A sender may be mailed a new verification link once per this many seconds. */
export const RESEND_INTERVAL_SECONDS = 60;

/** The list source of the account's senders. */
export function listSenders(deps: AppDeps, userId: number) {
  const { db } = deps.database;
  return queryListSource(
    () => selectSenders(db, userId),
    'id',
    (rows: SenderRow[]) => rows.map(toSender),
  );
}

async function requireSender(db: Db, userId: number, rawId: unknown): Promise<SenderRow> {
  const id = toId(rawId);
  const row = id ? await findSender(db, userId, id) : undefined;
  if (!row) throw new NotFound(RNF);
  return row;
}

/** One sender (details). */
export async function getSender(deps: AppDeps, userId: number, rawId: unknown) {
  return toSender(await requireSender(deps.database.db, userId, rawId));
}

/**
 * The address rules: the country exists, the state is one of the country's and
 * the city one of the state's (or of the country's when no state is given).
 */
function checkAddress(input: SenderInput, rules: Rules): void {
  const countryOk = !rules.failed('country_id') && countryById(input.country_id) !== undefined;
  if (!rules.failed('country_id') && !countryOk) rules.add('country_id', messages.invalid('country_id'));
  const state = input.state_id !== undefined && !rules.failed('state_id') ? stateById(input.state_id) : undefined;
  if (input.state_id !== undefined && !rules.failed('state_id') && (!state || (countryOk && state.country_id !== input.country_id))) {
    rules.add('state_id', messages.invalid('state_id'));
  }
  if (input.city_id !== undefined && !rules.failed('city_id')) {
    const city = cityById(input.city_id);
    const fits = input.state_id !== undefined ? city?.state_id === input.state_id : !countryOk || city?.country_id === input.country_id;
    if (!city || !fits) rules.add('city_id', messages.invalid('city_id'));
  }
}

function columnsOf(input: SenderInput) {
  return {
    from_name: input.from_name,
    from_email: input.from_email,
    reply_to_email: input.reply_to_email,
    country_id: input.country_id,
    state_id: input.state_id ?? null,
    city_id: input.city_id ?? null,
    zip_code: input.zip_code ?? null,
    company_address: input.company_address,
    company_address2: input.company_address2 ?? null,
    nickname: input.nickname,
  };
}

/**
 * Queues the verification mail in `trx`, the transaction that saves the sender's address: the
 * mail exists exactly when the change does, and a queue worker sends it (a slow or failing
 * server never holds the request).
 */
async function queueVerification(trx: Db, deps: AppDeps, row: SenderRow): Promise<void> {
  await enqueueSystemMail(trx, row.user_id, verificationMail(deps.config, row), deps.clock.now());
}

/** Saves an unverified sender and mails its verification link; returns the id. */
export async function createSender(deps: AppDeps, userId: number, input: SenderInput, schemaFailures: FieldErrors): Promise<number> {
  const rules = new Rules(schemaFailures);
  checkAddress(input, rules);
  rules.done();
  const now = deps.clock.now();
  const values = {
    user_id: userId,
    ...columnsOf(input),
    is_verified: 0,
    utr: randomUUID(),
    send_at: sqlDateTime(now),
    created_at: isoMicros(now),
    updated_at: isoMicros(now),
  };
  return deps.database.db.transaction().execute(async (trx) => {
    const id = await insertSender(trx, values);
    await queueVerification(trx, deps, { id, deleted_at: null, ...values });
    return id;
  });
}

/**
 * Replaces a sender's fields. A new `from_email` (compared case-insensitively) makes it
 * unverified again and mails a link to the new address at once.
 */
export async function updateSender(
  deps: AppDeps,
  userId: number,
  input: SenderInput & { sender_id: number },
  schemaFailures: FieldErrors,
): Promise<void> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  const row = rules.failed('sender_id') ? undefined : await findSender(db, userId, input.sender_id);
  if (!row && !rules.failed('sender_id')) throw new NotFound(RNF);
  checkAddress(input, rules);
  rules.done();
  const emailChanged = row!.from_email.toLowerCase() !== input.from_email.toLowerCase();
  const now = deps.clock.now();
  const reverify = emailChanged ? { is_verified: 0, send_at: sqlDateTime(now) } : {};
  await db.transaction().execute(async (trx) => {
    await updateSenderRow(trx, userId, input.sender_id, { ...columnsOf(input), ...reverify }, now);
    if (emailChanged) {
      const updated = await findSender(trx, userId, input.sender_id);
      if (updated) await queueVerification(trx, deps, updated);
    }
  });
}

/** Soft-deletes a sender. */
export async function deleteSender(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await softDeleteSender(deps.database.db, userId, id, deps.clock.now()))) throw new NotFound(RNF);
}

/**
 * Mails a new verification link, at most once per minute per sender (the mail sent on save
 * counts): sooner is 429 with Retry-After.
 */
export async function resendVerification(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const { db } = deps.database;
  const row = await requireSender(db, userId, rawId);
  const now = deps.clock.now();
  const notAfter = sqlDateTime(new Date(now.getTime() - RESEND_INTERVAL_SECONDS * 1000));
  const claimed = await db.transaction().execute(async (trx) => {
    if (!(await claimVerificationSlot(trx, userId, row.id, sqlDateTime(now), notAfter))) return false;
    await queueVerification(trx, deps, { ...row, send_at: sqlDateTime(now) });
    return true;
  });
  if (!claimed) {
    const current = await findSender(db, userId, row.id);
    if (!current) throw new NotFound(RNF);
    const sentAt = current.send_at ? Date.parse(current.send_at.replace(' ', 'T') + 'Z') : now.getTime();
    const wait = Math.min(
      RESEND_INTERVAL_SECONDS,
      Math.max(1, Math.ceil((sentAt + RESEND_INTERVAL_SECONDS * 1000 - now.getTime()) / 1000)),
    );
    throw new AppError(429, `A verification mail was sent less than a minute ago. Try again in ${wait} seconds.`, {
      'Retry-After': String(wait),
    });
  }
}

/** What opening a verification link did. */
export type VerifyOutcome = { ok: true; sender: SenderRow } | { ok: false; reason: 'invalid' | 'gone' };

/**
 * Opens a verification link: a genuine, unexpired token for a live sender whose address is
 * still the one the link was mailed to sets `is_verified` 1 (and tells the account's
 * notification recipients, once). Anything else verifies nothing.
 */
export async function verifySenderByToken(deps: AppDeps, token: unknown): Promise<VerifyOutcome> {
  const claim = readVerificationToken(deps.config.appSecret, token);
  if (!claim) return { ok: false, reason: 'invalid' };
  const { db } = deps.database;
  const row = await findSenderForVerification(db, claim.senderId);
  if (!row || !claim.matches(row.from_email)) return { ok: false, reason: 'gone' };
  await db.transaction().execute(async (trx) => {
    if (!(await markSenderVerified(trx, row.id, row.from_email, deps.clock.now()))) return;
    await enqueueEvent(trx, deps, row.user_id, 'sender.verified', {
      sender_id: row.id,
      from_name: row.from_name,
      from_email: row.from_email,
      nickname: row.nickname,
    });
  });
  return { ok: true, sender: { ...row, is_verified: 1 } };
}

/**
 * The `sender_id` rule of single sends and automation emails: null when the id names a live,
 * verified sender of the account, else the failure text (`The selected sender id is not
 * verified.` for an unverified one, the usual invalid text otherwise). Use with `Rules.check`.
 */
export async function senderFailure(deps: AppDeps, userId: number, id: number): Promise<string | null> {
  const { db } = deps.database;
  if (await findVerifiedSender(db, userId, id)) return null;
  return (await findSender(db, userId, id)) ? 'The selected sender id is not verified.' : messages.invalid('sender_id');
}

/** The sender's columns a mailing copies in when it is saved: a later change of the sender does not change it. */
export interface SenderCopy {
  from_sender: string;
  reply_to: string;
  sender_name: string;
  sender_address: string;
}

const CRLF = /[\r\n]/;

/**
 * Checks a mailing's `sender_id` (the schema's failure, if any, is already in `rules`) with
 * `senderFailure`'s rule, and returns the columns the mailing copies from the sender, or null when
 * the field failed.
 */
export async function checkMailSender(deps: AppDeps, userId: number, id: number | undefined, rules: Rules): Promise<SenderCopy | null> {
  await rules.check('sender_id', id, (v) => senderFailure(deps, userId, v));
  const sender = rules.failed('sender_id') || id === undefined ? undefined : await findSender(deps.database.db, userId, id);
  if (!sender) return null;
  // Saved senders cannot hold CR or LF; this guards the headers against rows written otherwise.
  if ([sender.from_name, sender.from_email, sender.reply_to_email].some((v) => CRLF.test(v))) {
    rules.add('sender_id', messages.format('sender_id'));
    return null;
  }
  return {
    from_sender: sender.from_email,
    reply_to: sender.reply_to_email,
    sender_name: sender.from_name,
    sender_address: senderAddress(sender),
  };
}
