/**
 * The rules of an automation's and an email's parameters that a schema cannot say: the target,
 * group, sender and template of the account, one design only. Each returns the columns to store
 * or throws every failure together (422).
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { messages, type Rules } from '../../http/messages.js';
import { checkMailSender } from '../senders/senders.service.js';
import { parseRecipientKeys } from '../single-sends/single-sends.rules.js';
import { liveContactTypeIds, liveSegmentIds } from '../single-sends/single-sends.queries.js';
import { checkDesign } from '../templates/templates.rules.js';
import { findUnsubscribeGroup } from '../unsubscribes/groups.queries.js';
import type { CreateAutomationInput, CreateScheduleInput } from './automations.schema.js';
import { AUTOMATION_TYPE, type AutomationRow } from './automations.types.js';

/** The stored form of an automation's target. */
type Target = Pick<AutomationRow, 'automation_for' | 'automation_for_table'>;

/** `automation_for` (`contacts_<id>` or `segments_<id>`, as single sends' recipient keys) → its columns, or null when malformed. */
function parseTarget(key: string): Target | null {
  const refs = parseRecipientKeys([key]);
  return refs && refs.length === 1 ? { automation_for: Number(refs[0].id), automation_for_table: refs[0].table } : null;
}

/** Whether an automation's target (a contact type or segment of the account) is still live; `db` may be a transaction. */
export async function targetExists(db: Db, userId: number, automation: Target): Promise<boolean> {
  const id = Number(automation.automation_for);
  const live = automation.automation_for_table === 'segments' ? liveSegmentIds(db, userId, [id]) : liveContactTypeIds(db, userId, [id]);
  return (await live).has(id);
}

/** Checks create's parameters (the schema's failures are already in `rules`); returns the columns to store. */
export async function checkAutomation(deps: AppDeps, userId: number, input: CreateAutomationInput, rules: Rules) {
  const columns = await checkAutomationFields(deps, userId, input, rules);
  return { ...columns, automation_type: AUTOMATION_TYPE[input.type], exit_criteria: input.exit_criteria ?? 0 };
}

/**
 * Checks the fields create and update share (the schema's failures are already in `rules`): the
 * target and the group must be the account's. Returns their columns (`exit_criteria` only when given).
 */
export async function checkAutomationFields(deps: AppDeps, userId: number, input: Omit<CreateAutomationInput, 'type'>, rules: Rules) {
  await rules.check('automation_for', input.automation_for, async (key) => {
    const target = parseTarget(key);
    return target && (await targetExists(deps.database.db, userId, target)) ? null : messages.invalid('automation_for');
  });
  await rules.check('unsubscribe_group_id', input.unsubscribe_group_id, async (id) =>
    (await findUnsubscribeGroup(deps.database.db, userId, id)) ? null : messages.invalid('unsubscribe_group_id'),
  );
  rules.done();
  return {
    automation_name: input.automation_name,
    ...parseTarget(input.automation_for)!,
    ...(input.exit_criteria === undefined ? {} : { exit_criteria: input.exit_criteria }),
    unsubscribe_group_id: input.unsubscribe_group_id,
  };
}

/**
 * Checks schedule create's email parameters (the schema's failures are already in `rules`); returns
 * the columns to store, with the sender's fields copied in as a single send copies them.
 */
export async function checkSchedule(deps: AppDeps, userId: number, input: CreateScheduleInput, rules: Rules) {
  const sender = await checkMailSender(deps, userId, input.sender_id, rules);
  const design = await checkDesign(input, rules);
  rules.done();
  return {
    sender_id: input.sender_id,
    ...sender!,
    subject: input.subject,
    waiting_period: input.waiting_period,
    waiting_type: input.waiting_type,
    template_id: input.template_id,
    preview_img: input.preview_img,
    track_clicks: input.track_clicks ?? 1,
    ...design,
  };
}
