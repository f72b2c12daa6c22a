/**
 * The recipient's side of unsubscribing, reached through the signed link of one message: which
 * lists the message's address is on, the RFC 8058 one-click unsubscribe, and the preferences form.
 * Lists are the account's global unsubscribe list and its unsubscribe groups (an address on a
 * group's list gets no mail sent under that group).
 */
import type { AppDeps } from '../deps.js';
import type { Db } from '../db/index.js';
import { findGroupAnyState, listDisplayGroups } from '../modules/unsubscribes/groups.queries.js';
import { deleteUnsubscribers } from '../modules/unsubscribes/unsubscribes.queries.js';
import { unsubscribeEntriesOf } from '../suppression/suppression.reads.js';
import { unsubscribeEmail } from '../modules/unsubscribes/unsubscribes.service.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { record } from '../messages/ledger.js';
import type { PublicMessage } from './messages.queries.js';
import type { GroupChoice } from './unsubscribe.page.js';

export interface Preferences {
  global: boolean;
  /** The groups the page offers: every live group shown on preferences pages, and the message's own. */
  groups: GroupChoice[];
}

/** What the form asks for: on the global list or not, and on which of the offered groups' lists. */
export interface Choice {
  global: boolean;
  groupIds: number[];
}

/** The lists offered for the message's address, each with its current state. */
export async function preferencesOf(db: Db, message: PublicMessage): Promise<Preferences> {
  const groups = await listDisplayGroups(db, message.user_id);
  if (message.groupId !== null && !groups.some((g) => g.id === message.groupId)) {
    const own = await findGroupAnyState(db, message.user_id, message.groupId);
    // A deleted group still suppresses, but is no longer offered anywhere.
    if (own && own.deleted_at === null) groups.unshift(own);
  }
  const entries = await unsubscribeEntriesOf(db, message.user_id, message.email.trim().toLowerCase());
  const on = new Set(entries.map((e) => e.unsubscribe_groups_id));
  return {
    global: on.has(null),
    groups: groups.map((g) => ({ id: g.id, name: g.group_name, description: g.description, unsubscribed: on.has(g.id) })),
  };
}

/**
 * RFC 8058 one-click: the address joins the list of the group the message was sent under (the
 * global list when it has none). Idempotent; the first unsubscribe through the message counts once.
 */
export async function unsubscribeOneClick(deps: AppDeps, kinds: MailKinds, message: PublicMessage): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const added = await unsubscribeEmail(trx, message.user_id, message.email, message.groupId, { now, contactId: message.contactId });
    if (added) await record(trx, { kinds, now }, [{ type: 'unsubscribed', id: message.id }]);
  });
}

/**
 * Applies the form: every offered list (the global one and the offered groups) ends in the chosen
 * state. Checking a box unsubscribes; unchecking one re-subscribes (the entry is removed), so the
 * page is a true preferences page and posting it twice changes nothing the second time. Only a
 * first unsubscribe that stops this message's mail (global, or the message's own group) counts, and
 * at most once per message (its `unsubscribed` flag never goes back to 0, re-subscribing or not).
 * Ids of groups not offered are refused (returns false, nothing changed).
 */
export async function applyPreferences(deps: AppDeps, kinds: MailKinds, message: PublicMessage, choice: Choice): Promise<boolean> {
  const now = deps.clock.now();
  return deps.database.db.transaction().execute(async (trx) => {
    const offered = await preferencesOf(trx, message);
    const offeredIds = new Set(offered.groups.map((g) => g.id));
    if (choice.groupIds.some((id) => !offeredIds.has(id))) return false;
    const chosen = new Set(choice.groupIds);
    const entries = await unsubscribeEntriesOf(trx, message.user_id, message.email.trim().toLowerCase());
    let stopsThisMail = false;

    const want = [{ groupId: null as number | null, on: choice.global, was: offered.global }].concat(
      offered.groups.map((g) => ({ groupId: g.id, on: chosen.has(g.id), was: g.unsubscribed })),
    );
    for (const list of want) {
      if (list.on && !list.was) {
        const added = await unsubscribeEmail(trx, message.user_id, message.email, list.groupId, { now, contactId: message.contactId });
        if (added && (list.groupId === null || list.groupId === message.groupId)) stopsThisMail = true;
      } else if (!list.on && list.was) {
        const ids = entries.filter((e) => e.unsubscribe_groups_id === list.groupId).map((e) => e.id);
        await deleteUnsubscribers(trx, message.user_id, ids, list.groupId === null ? 'global' : 'groups');
      }
    }
    if (stopsThisMail) await record(trx, { kinds, now }, [{ type: 'unsubscribed', id: message.id }]);
    return true;
  });
}
