/**
 * The public side of a sign-up form: a post stores a pending sign-up and mails a confirmation
 * link; confirming it (a POST, never a GET: mail scanners open links) makes the address a contact
 * and keeps the proof of consent. The caps on confirmation mails are counted in the database
 * (forms.limits.ts), so they hold across processes.
 */
import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountAddress } from '../../db/dialect.js';
import { emitEvents } from '../../events/outbox.js';
import type { FieldErrors } from '../../http/errors.js';
import { label, messages } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { CONTACT_COLUMNS, RESERVED_FIELDS } from '../../reference/fields.js';
import { findCountry } from '../../reference/geo.js';
import { isEmail } from '../../util/email.js';
import { hashSecret } from '../../util/secrets.js';
import { isoMicros } from '../../util/time.js';
import { createTokens } from '../../util/tokens.js';
import { audienceChanged } from '../audience/audience.service.js';
import { findContactType } from '../contact-types/contact-types.queries.js';
import { findContact, findContactIdByEmail, insertContact, updateContactRow } from '../contacts/contacts.queries.js';
import { fieldTypeMessage, fitsFieldType, parseCustomValues, serializeCustomValues } from '../contacts/contacts.values.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { enqueueSystemMail } from '../notifications/notifications.mail.js';
import { findVerifiedSender } from '../senders/senders.queries.js';
import { deleteUnsubscribers } from '../unsubscribes/unsubscribes.queries.js';
import { isSuppressed, unsubscribeEntriesOf } from '../../suppression/suppression.reads.js';
import { HONEYPOT } from './forms.embed.js';
import { capReached, isRepeat, logSignup, signupKeys, type Cap } from './forms.limits.js';
import { confirmationMail } from './forms.mail.js';
import {
  deleteExpiredPending,
  deletePendingOf,
  findFormById,
  findPending,
  insertConsent,
  insertPending,
  takePending,
} from './forms.queries.js';
import { fieldsOf, type FormRow } from './forms.schema.js';

const PURPOSE = 'signup-confirm';
/** How long a confirmation link works. */
export const CONFIRM_DAYS = 7;

/** Who is posting or confirming. */
export interface Visitor {
  ip: string;
  userAgent: string | null;
}

export type SignupOutcome =
  | { kind: 'not_found' }
  | { kind: 'unavailable' }
  | { kind: 'invalid'; errors: FieldErrors }
  | { kind: 'limited'; cap: Cap; retryAfter: number }
  | { kind: 'accepted' };

const RESERVED_TYPES = new Map<string, string>(RESERVED_FIELDS.map((f) => [f.name, f.type]));
const COLUMNS = new Set<string>(CONTACT_COLUMNS);
const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * Reads the posted values of the form's fields (others are ignored) and checks each against its
 * field: the address, a country by id, name or code (stored as its id), numbers and dates by type.
 */
async function readValues(db: Db, form: FormRow, body: Record<string, unknown>, errors: FieldErrors) {
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const email = text(body.email);
  if (!errors.email) {
    if (email === '') add('email', messages.required('email'));
    else if (!isEmail(email)) add('email', messages.email('email'));
  }
  const custom = await customFieldsByName(db, form.user_id);
  const posted = (body.custom_field ?? {}) as Record<string, unknown>;
  const values: Record<string, string> = {};
  for (const field of fieldsOf(form)) {
    if (field === 'email') continue;
    const reserved = RESERVED_TYPES.get(field);
    const type = reserved ?? custom.get(field)?.field_type;
    if (type === undefined) continue; // a custom field deleted since the form was made
    const key = reserved ? field : `custom_field.${field}`;
    const value = text(reserved ? body[field] : posted[field]);
    if (value === '' || errors[key]) continue;
    if (field === 'alt_email' && !isEmail(value)) add(key, messages.email(key));
    else if (field === 'country') {
      const country = findCountry(value);
      if (country) values.country = String(country.id);
      else add(key, messages.invalid(key));
    } else if (!fitsFieldType(type, value)) add(key, fieldTypeMessage(type, label(key)));
    else values[field] = value;
  }
  return { email, values };
}

/** Whether the account must never mail the address: globally unsubscribed or suppressed (whatever the group). */
function isBarred(db: Db, userId: number, email: string): Promise<boolean> {
  return isSuppressed(db, userId, email, null);
}

/**
 * A post of form `rawFormId`. Over one of the caps on confirmation mails, it is `limited`. A filled
 * honeypot, an address the account must not mail, and a second post of the same address (or one of
 * its `+tag` forms) to the same form within the hour are all answered as a success and mail nothing
 * (the answer reveals nothing). Otherwise a pending sign-up is stored and its confirmation mail
 * queued, in one transaction.
 */
export async function signUp(
  deps: AppDeps,
  rawFormId: unknown,
  body: Record<string, unknown>,
  visitor: Visitor,
  schemaFailures: FieldErrors,
): Promise<SignupOutcome> {
  const { db } = deps.database;
  const id = toId(rawFormId);
  const form = id ? await findFormById(db, id) : undefined;
  if (!form) return { kind: 'not_found' };
  if (text(body[HONEYPOT]) !== '') return { kind: 'accepted' };
  const errors: FieldErrors = { ...schemaFailures };
  const { email, values } = await readValues(db, form, body, errors);
  if (Object.keys(errors).length) return { kind: 'invalid', errors };
  const sender = await findVerifiedSender(db, form.user_id, form.sender_id);
  if (!sender || !(await findContactType(db, form.user_id, form.contact_type_id))) return { kind: 'unavailable' };

  const now = deps.clock.now();
  const emailKey = email.toLowerCase();
  const keys = signupKeys(deps.config.appSecret, form, email, visitor.ip);
  return db.transaction().execute(async (trx) => {
    // Posts of one address (any +tag), and posts to one form, wait for each other: no two of them
    // can both pass a cap with one place left.
    await lockAccountAddress(trx, form.user_id, keys.addressHash);
    await lockAccountAddress(trx, form.user_id, `form ${form.id}`);
    await deleteExpiredPending(trx, isoMicros(now));
    const capped = await capReached(trx, keys, now);
    if (capped) return { kind: 'limited', ...capped } as const;
    if (await isRepeat(trx, keys, now)) return { kind: 'accepted' } as const;
    // Counted even when the address is barred, so that the caps answer alike for every address and
    // a 429 tells nobody whether an address is unsubscribed or suppressed.
    await logSignup(trx, keys, now);
    if (await isBarred(trx, form.user_id, email)) return { kind: 'accepted' } as const;

    const token = createTokens(deps.config.appSecret).sign(PURPOSE, randomBytes(18).toString('base64url'));
    const mail = confirmationMail(deps.config.publicUrl, form, sender, email, token, CONFIRM_DAYS);
    await insertPending(trx, {
      user_id: form.user_id,
      form_id: form.id,
      email,
      email_key: emailKey,
      field_values: JSON.stringify(values),
      ip: visitor.ip,
      user_agent: visitor.userAgent,
      mail_subject: mail.subject,
      mail_text: mail.recordText,
      token_hash: hashSecret(token),
      created_at: isoMicros(now),
      expires_at: isoMicros(new Date(now.getTime() + CONFIRM_DAYS * 86_400_000)),
    });
    await enqueueSystemMail(trx, form.user_id, mail.message, now);
    return { kind: 'accepted' } as const;
  });
}

export type ConfirmOutcome =
  | { kind: 'invalid' }
  | { kind: 'gone' }
  | { kind: 'refused'; email: string }
  | { kind: 'ready'; email: string }
  | { kind: 'confirmed'; email: string; redirectUrl: string | null };

/** The hash of a genuine token (signed by this service), or null for a forged or altered one. */
function tokenHash(deps: AppDeps, token: unknown): string | null {
  return typeof token === 'string' && createTokens(deps.config.appSecret).verify(PURPOSE, token) !== null ? hashSecret(token) : null;
}

/** What the confirmation page (GET) shows for a token: changes nothing. */
export async function confirmationOf(deps: AppDeps, token: unknown): Promise<ConfirmOutcome> {
  const hash = tokenHash(deps, token);
  if (!hash) return { kind: 'invalid' };
  const pending = await findPending(deps.database.db, hash);
  if (!pending || pending.expires_at <= isoMicros(deps.clock.now())) return { kind: 'gone' };
  return { kind: 'ready', email: pending.email };
}

/**
 * Confirms the sign-up of a token, in one transaction: the contact is created or updated in the
 * form's contact type (segments and automations follow), the address leaves the form's
 * unsubscribe group, the consent is recorded, `contact.subscribed` is written, and the pending
 * sign-up is gone (a link confirms once). A global unsubscribe or a suppression is never lifted:
 * such an address is refused.
 */
export async function confirmSignUp(deps: AppDeps, token: unknown, visitor: Visitor): Promise<ConfirmOutcome> {
  const hash = tokenHash(deps, token);
  if (!hash) return { kind: 'invalid' };
  const now = deps.clock.now();
  const at = isoMicros(now);
  return deps.database.db.transaction().execute(async (trx) => {
    const pending = await takePending(trx, hash);
    if (!pending || pending.expires_at <= at) return { kind: 'gone' } as const;
    const form = await findFormById(trx, pending.form_id);
    if (!form || !(await findContactType(trx, form.user_id, form.contact_type_id))) return { kind: 'gone' } as const;
    await lockAccountAddress(trx, form.user_id, pending.email_key);
    if (await isBarred(trx, form.user_id, pending.email)) return { kind: 'refused', email: pending.email } as const;

    const contactId = await saveContact(trx, form, pending.email, JSON.parse(pending.field_values) as Record<string, string>, now);
    await audienceChanged(trx, deps, form.user_id, { contactIds: [contactId] });
    if (form.unsubscribe_group_id !== null) {
      const entries = await unsubscribeEntriesOf(trx, form.user_id, pending.email_key);
      const ids = entries.filter((e) => e.unsubscribe_groups_id === form.unsubscribe_group_id).map((e) => e.id);
      if (ids.length) await deleteUnsubscribers(trx, form.user_id, ids, 'groups');
    }
    await insertConsent(trx, {
      user_id: form.user_id,
      contact_id: contactId,
      email_key: pending.email_key,
      form_id: form.id,
      form_name: form.name,
      signed_up_at: pending.created_at,
      signup_ip: pending.ip,
      signup_user_agent: pending.user_agent,
      confirmed_at: at,
      confirm_ip: visitor.ip,
      confirm_user_agent: visitor.userAgent,
      mail_subject: pending.mail_subject,
      mail_text: pending.mail_text,
      created_at: at,
    });
    await deletePendingOf(trx, form.id, pending.email_key);
    await emitEvents(trx, now, [
      {
        userId: form.user_id,
        type: 'contact.subscribed',
        data: { email: pending.email, contact_id: contactId, form_id: form.id },
        email: pending.email,
      },
    ]);
    return { kind: 'confirmed', email: pending.email, redirectUrl: form.redirect_url } as const;
  });
}

/**
 * Creates the contact of a confirmed sign-up in the form's contact type, or updates the one with
 * that address: the values given replace the stored ones, custom values are merged.
 */
async function saveContact(trx: Db, form: FormRow, email: string, values: Record<string, string>, now: Date): Promise<number> {
  const columns: Record<string, string> = {};
  const custom: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) (COLUMNS.has(k) ? columns : custom)[k] = v;
  const existing = await findContactIdByEmail(trx, form.user_id, form.contact_type_id, email);
  const row = existing ? await findContact(trx, form.user_id, existing) : undefined;
  if (row) {
    const merged = { ...parseCustomValues(row.custom_field), ...custom };
    await updateContactRow(trx, form.user_id, row.id, { ...columns, custom_field: serializeCustomValues(merged) }, now);
    return row.id;
  }
  return insertContact(
    trx,
    {
      user_id: form.user_id,
      contact_type_id: form.contact_type_id,
      email,
      email_key: email.toLowerCase(),
      first_name: columns.first_name ?? '',
      last_name: columns.last_name ?? '',
      country: columns.country ?? '',
      alt_email: columns.alt_email ?? null,
      state: columns.state ?? null,
      city: columns.city ?? null,
      address_line1: columns.address_line1 ?? null,
      address_line2: columns.address_line2 ?? null,
      state_province_region: columns.state_province_region ?? null,
      postal_code: columns.postal_code ?? null,
      custom_field: serializeCustomValues(custom),
    },
    now,
  );
}
