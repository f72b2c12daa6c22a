/**
 * The ledger's writes of a message's row: each event's guarded update (`transitions.ts` decides
 * what counts and what it adds; these only write). With `messages.writes.ts`, the only file that
 * writes `mail_messages`; the one state change here (a bounce after the accept: sent → bounced) is
 * a move of `messages.states.ts`.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { isoMicros } from '../util/time.js';
import { caseOf, caseText } from './batch.js';
import type { MailKinds } from './messages.kinds.js';
import { move } from './messages.states.js';
import { eventColumns, type EventMessage } from './sources.js';

/**
 * Sets the bounce type of messages not bounced yet (`types`, by id; ids ascending), in one
 * statement. After the `accept` a `sent` message becomes `bounced`; after an `attempt` the mark
 * already made it `bounced`. Returns the rows it changed, with `sent_at`.
 */
export async function setBounceTypes(
  trx: Db,
  kinds: MailKinds,
  ids: number[],
  types: ReadonlyMap<number, 'hard' | 'soft'>,
  after: 'attempt' | 'accept',
  now: Date,
): Promise<Array<EventMessage & { sent_at: string | null }>> {
  const cases = sql.join(
    ids.map((id) => sql`when ${id} then ${types.get(id)!}`),
    sql` `,
  );
  return trx
    .updateTable('mail_messages')
    .set({
      ...(after === 'accept' ? { state: 'bounced' as const } : {}),
      bounce_type: sql<string>`case ${sql.ref('id')} ${cases} end`,
      updated_at: isoMicros(now),
    })
    .where('id', 'in', ids)
    .where('bounce_type', 'is', null)
    .where('state', 'in', after === 'accept' ? move(['sent'], 'bounced') : ['bounced'])
    .returning([...eventColumns(kinds), 'sent_at'])
    .execute() as Promise<Array<EventMessage & { sent_at: string | null }>>;
}

/** Sets a once-only flag (`complained`, `unsubscribed`) of the messages (ids ascending) where it is still 0; returns the rows it set. */
export async function setFlag(trx: Db, kinds: MailKinds, flag: 'complained' | 'unsubscribed', ids: number[]): Promise<EventMessage[]> {
  return trx
    .updateTable('mail_messages')
    .set({ [flag]: 1 })
    .where('id', 'in', ids)
    .where(flag, '=', 0)
    .returning(eventColumns(kinds))
    .execute() as Promise<EventMessage[]>;
}

/**
 * Adds a batch of opens at `now`: `hits` and `machineHits` per message (ids ascending), `people`
 * the messages a person opened. Sets the first open and a person's first open where still empty
 * (returned as `firsts` and `humanFirsts`), then the counts and a person's last open. Returns the
 * rows of the messages that exist.
 */
export async function addOpens(
  trx: Db,
  kinds: MailKinds,
  batch: { ids: number[]; people: number[]; hits: ReadonlyMap<number, number>; machineHits: ReadonlyMap<number, number> },
  now: Date,
): Promise<{ firsts: Set<number>; humanFirsts: Set<number>; rows: EventMessage[] }> {
  const at = isoMicros(now);
  const { ids, people } = batch;
  const first = await trx
    .updateTable('mail_messages')
    .set({ first_opened_at: at })
    .where('id', 'in', ids)
    .where('first_opened_at', 'is', null)
    .returning('id')
    .execute();
  const humanFirsts = new Set<number>();
  if (people.length > 0) {
    const rows = await trx
      .updateTable('mail_messages')
      .set({ last_human_opened_at: at })
      .where('id', 'in', people)
      .where('last_human_opened_at', 'is', null)
      .returning('id')
      .execute();
    for (const r of rows) humanFirsts.add(Number(r.id));
  }
  const seen = new Map(people.map((id) => [id, at]));
  const rows = await trx
    .updateTable('mail_messages')
    .set((eb) => ({
      opens: eb('opens', '+', caseOf(batch.hits)),
      machine_opens: eb('machine_opens', '+', caseOf(batch.machineHits)),
      last_human_opened_at: caseText('last_human_opened_at', seen),
      human_pixel_opened_at: caseText('human_pixel_opened_at', seen),
    }))
    .where('id', 'in', ids)
    .returning(eventColumns(kinds))
    .execute();
  return { firsts: new Set(first.map((r) => Number(r.id))), humanFirsts, rows: rows as EventMessage[] };
}

/** The click and open times of a message a batch of clicks rewrites. */
export type ClickTimes = Record<
  'first_clicked_at' | 'last_human_clicked_at' | 'first_opened_at' | 'last_human_opened_at',
  Map<number, string | null>
>;

/** Adds a batch of clicks' deltas (`clicks`, `bots`, `opens`, by message) and sets each message's times, in one statement; returns the rows. */
export async function addClicks(
  trx: Db,
  kinds: MailKinds,
  ids: number[],
  deltas: { clicks: ReadonlyMap<number, number>; bots: ReadonlyMap<number, number>; opens: ReadonlyMap<number, number>; times: ClickTimes },
): Promise<EventMessage[]> {
  const { times } = deltas;
  return trx
    .updateTable('mail_messages')
    .set((eb) => ({
      clicks: eb('clicks', '+', caseOf(deltas.clicks)),
      bot_clicks: eb('bot_clicks', '+', caseOf(deltas.bots)),
      opens: eb('opens', '+', caseOf(deltas.opens)),
      first_clicked_at: caseText('first_clicked_at', times.first_clicked_at),
      last_human_clicked_at: caseText('last_human_clicked_at', times.last_human_clicked_at),
      first_opened_at: caseText('first_opened_at', times.first_opened_at),
      last_human_opened_at: caseText('last_human_opened_at', times.last_human_opened_at),
    }))
    .where('id', 'in', ids)
    .returning(eventColumns(kinds))
    .execute() as Promise<EventMessage[]>;
}
