/**
 * The rules of a single send's parameters that a schema cannot say: the sender, group, recipient
 * keys and template of the account, one design only, and the schedule (date, time, time zone → the
 * UTC moment the send may start).
 */
import { DateTime, IANAZone } from 'luxon';
import type { AppDeps } from '../../deps.js';
import type { RecipientRef } from '../../delivery/audience.js';
import { messages, type Rules } from '../../http/messages.js';
import { isoMicros } from '../../util/time.js';
import { checkMailSender } from '../senders/senders.service.js';
import { senderDomainFailure } from '../sending-domains/sending-domains.engine.js';
import { checkDesign } from '../templates/templates.rules.js';
import { findUnsubscribeGroup } from '../unsubscribes/groups.queries.js';
import { checkAbTest } from './ab-tests.rules.js';
import { liveContactTypeIds, liveSegmentIds } from './single-sends.queries.js';
import type { SingleSendInput } from './single-sends.schema.js';

export type { RecipientRef };

/** The zero date and time an immediate send shows. */
export const ZERO_DATE = '0000-00-00';
export const ZERO_TIME = '00:00:00';

const KEY = /^(contacts|segments)_(\d{1,10})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

/** Recipient keys → refs (each once, in order), or null when one is malformed. */
export function parseRecipientKeys(keys: readonly string[]): RecipientRef[] | null {
  const out: RecipientRef[] = [];
  const seen = new Set<string>();
  for (const raw of keys) {
    const m = KEY.exec(raw.trim());
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 2_147_483_647) return null;
    const ref: RecipientRef = {
      id: String(Number(m[2])),
      table: m[1] as RecipientRef['table'],
    };
    const k = `${ref.table}_${ref.id}`;
    if (!seen.has(k)) out.push(ref);
    seen.add(k);
  }
  return out;
}

/** Whether every ref names a live contact type or segment of the account. */
async function refsExist(deps: AppDeps, userId: number, refs: RecipientRef[]): Promise<boolean> {
  const { db } = deps.database;
  const typeIds = refs.filter((r) => r.table === 'contacts').map((r) => Number(r.id));
  const segmentIds = refs.filter((r) => r.table === 'segments').map((r) => Number(r.id));
  const [types, segments] = await Promise.all([liveContactTypeIds(db, userId, typeIds), liveSegmentIds(db, userId, segmentIds)]);
  return typeIds.every((id) => types.has(id)) && segmentIds.every((id) => segments.has(id));
}

async function checkRefs(deps: AppDeps, userId: number, field: string, keys: string[] | undefined, rules: Rules): Promise<RecipientRef[]> {
  if (keys === undefined || rules.failed(field)) return [];
  const refs = parseRecipientKeys(keys);
  if (!refs || !(await refsExist(deps, userId, refs))) {
    rules.add(field, messages.invalid(field));
    return [];
  }
  return refs;
}

/** The schedule's columns: the local date and time as given, and the UTC moment they mean. */
export interface Schedule {
  schedule_date: string;
  schedule_time: string;
  timezone: string | null;
  due_at: string;
}

/**
 * The UTC moment of a local date and time in `zone` (Luxon, with the zone's rules). A time that
 * does not exist (the hour skipped when clocks go forward) moves forward by the gap: 02:30 on a
 * spring-forward night is 03:30 local. A time that happens twice (clocks go back) is its first
 * occurrence, so a send never goes out later than the first moment the clock shows its time.
 */
export function zonedToUtc(date: string, time: string, zone: string): Date {
  const local = DateTime.fromISO(`${date}T${time}`, { zone });
  const candidates = local.getPossibleOffsets();
  const first = candidates.length > 0 ? candidates.reduce((a, b) => (a.toMillis() <= b.toMillis() ? a : b)) : local;
  return first.toJSDate();
}

function checkSchedule(input: SingleSendInput, rules: Rules, now: Date): Schedule | null {
  const zone = input.timezone?.trim() || null;
  if (zone !== null && !rules.failed('timezone') && !IANAZone.isValidZone(zone)) rules.add('timezone', messages.invalid('timezone'));
  if (input.schedule_type !== 1)
    return {
      schedule_date: ZERO_DATE,
      schedule_time: ZERO_TIME,
      timezone: zone,
      due_at: isoMicros(now),
    };
  const date = input.schedule_date?.trim() ?? '';
  const time = input.schedule_time?.trim() ?? '';
  const requiredIf = (f: string) => `The ${f.replace(/_/g, ' ')} field is required when schedule type is 1.`;
  if (!rules.failed('schedule_date')) {
    if (date === '') rules.add('schedule_date', requiredIf('schedule_date'));
    else if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !DateTime.fromFormat(date, 'yyyy-MM-dd', { zone: 'utc' }).isValid)
      rules.add('schedule_date', messages.date('schedule_date'));
  }
  const t = TIME.exec(time);
  if (!rules.failed('schedule_time')) {
    if (time === '') rules.add('schedule_time', requiredIf('schedule_time'));
    else if (!t) rules.add('schedule_time', messages.format('schedule_time'));
  }
  if (rules.failed('schedule_date') || rules.failed('schedule_time') || rules.failed('timezone') || !t) return null;
  const hms = `${t[1]}:${t[2]}:${t[3] ?? '00'}`;
  const due = zonedToUtc(date, hms, zone ?? 'utc');
  return {
    schedule_date: date,
    schedule_time: hms,
    timezone: zone,
    due_at: isoMicros(due),
  };
}

/** The columns a valid create or update writes (everything but identity, status and statistics). */
export type SendColumns = Awaited<ReturnType<typeof checkSingleSend>>['columns'];

/**
 * Checks every parameter (the schema's failures are already in `rules`) and returns the columns
 * to store, with the sender's fields copied in, and the A/B test's variants; throws the collected
 * failures (422) if any.
 */
export async function checkSingleSend(deps: AppDeps, userId: number, input: SingleSendInput, rules: Rules, now: Date) {
  const { db } = deps.database;
  const sender = await checkMailSender(deps, userId, input.sender_id, rules);
  // A send that would start or be scheduled (not a draft) never goes from a domain that fails authentication.
  if (sender && input.draft !== 1) await rules.check('sender_id', sender.from_sender, (from) => senderDomainFailure(deps, userId, from));
  await rules.check('unsubscribe_group_id', input.unsubscribe_group_id, async (id) =>
    (await findUnsubscribeGroup(db, userId, id)) ? null : messages.invalid('unsubscribe_group_id'),
  );
  const recipients = await checkRefs(deps, userId, 'recipient_id', input.recipient_id, rules);
  const excluded = await checkRefs(deps, userId, 'exclude_specific_recipient_id', input.exclude_specific_recipient_id, rules);
  const design = await checkDesign(input, rules);
  const schedule = checkSchedule(input, rules, now);
  const ab = await checkAbTest(deps, userId, input, rules);
  rules.done();
  const columns = {
    template_id: input.template_id,
    ...design,
    recipient_id: JSON.stringify(recipients),
    exclude_specific_recipient_id: JSON.stringify(excluded),
    sender_id: input.sender_id,
    unsubscribe_group_id: input.unsubscribe_group_id,
    single_send_name: input.single_send_name,
    ...sender!,
    subject: input.subject,
    preheader: input.preheader,
    track_clicks: input.track_clicks ?? 1,
    schedule_type: input.schedule_type,
    ...schedule!,
    ...ab.columns,
  };
  return { columns, variants: ab.variants };
}
