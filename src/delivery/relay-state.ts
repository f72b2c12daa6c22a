import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf, epochMsNow } from '../db/dialect.js';

/**
 * The state every worker shares about a relay: its row of `relays`. Each statement reads the time
 * once, from the database's clock (or, in tests, from a time passed in), so workers on machines
 * whose clocks differ decide on one timeline.
 */

/** The first pause of a relay that throttles or cannot be reached; each pause in a row doubles it. */
export const PAUSE_FIRST_MS = 1000;
/** The longest pause. */
export const PAUSE_MAX_MS = 5 * 60_000;

/** A relay row with the time of the statement that read or changed it (epoch ms, database clock). */
export interface RelayRow {
  name: string;
  /** The relay's next free sending turn (see `takeRelayTurn`). */
  next_at: number;
  paused_until: number;
  pause_ms: number;
  now: number;
}

const numeric = (r: RelayRow): RelayRow => ({
  name: r.name,
  next_at: Number(r.next_at),
  paused_until: Number(r.paused_until),
  pause_ms: Number(r.pause_ms),
  now: Number(r.now),
});

/** The database's clock, or the time given (a test's controlled clock). */
function nowOf(db: Db, at: number | undefined): RawBuilder<number> {
  return at === undefined ? epochMsNow(engineOf(db)) : sql<number>`cast(${at} as double precision)`;
}

/** Creates the rows of the named relays that do not exist yet. */
export async function ensureRelays(db: Db, names: string[]): Promise<void> {
  await db
    .insertInto('relays')
    .values(names.map((name) => ({ name })))
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/** The shared state of the named relays, with the database's time. */
export async function readRelays(db: Db, names: string[], at?: number): Promise<RelayRow[]> {
  const { rows } = await sql<RelayRow>`
    select name, next_at, paused_until, pause_ms, ${nowOf(db, at)} as now
    from relays where name in (${sql.join(names)})`.execute(db);
  return rows.map(numeric);
}

/**
 * Takes the relay's next turn for a message (GCRA, as one atomic conditional update). `next_at` is
 * the next free turn; turns are `intervalMs` (1000 / rate) apart. The message's turn is `next_at`
 * if that is still to come (the sender waits for it) or less than `toleranceMs` ago (a sender a
 * little late keeps the schedule, so the long-run rate is the relay's own), else now: a relay idle
 * for a whole interval starts its schedule again from the message, banking nothing. `next_at` then
 * becomes the turn + interval. So turns are at least an interval apart, each comes after the
 * message of the one before went, and the `rate` + 1 messages after any message go more than 1 s
 * after it: at most `rate` + 1 in any 1-second window, 3 × `rate` + 1 in any 3 seconds. (The
 * textbook GCRA with this tolerance lets two go at once after an idle moment, and the message
 * `rate` turns later then lands exactly 1 s after them: one too many in a window closed at both
 * ends.) Returns the row after the update (the turn is `next_at − intervalMs`), or undefined while
 * the relay is paused.
 */
export async function takeRelayTurn(
  db: Db,
  name: string,
  opts: { intervalMs: number; toleranceMs: number; at?: number },
): Promise<RelayRow | undefined> {
  const now = nowOf(db, opts.at);
  const { intervalMs, toleranceMs } = opts;
  const { rows } = await sql<RelayRow>`
    update relays
    set next_at = case when ${now} < next_at + ${toleranceMs} then next_at else ${now} end + ${intervalMs}
    where name = ${name} and paused_until <= ${now}
    returning name, next_at, paused_until, pause_ms, ${now} as now`.execute(db);
  return rows[0] && numeric(rows[0]);
}

/**
 * Uses up the relay's next `turns` turns without a message: for a message that reached the relay
 * late, long after its own turn, so that it counts where it arrived (see the dispatcher).
 */
export async function spendRelayTurns(db: Db, name: string, opts: { intervalMs: number; turns: number; at?: number }): Promise<void> {
  const now = nowOf(db, opts.at);
  await sql`
    update relays set next_at = case when next_at > ${now} then next_at else ${now} end + ${opts.intervalMs * opts.turns}
    where name = ${name}`.execute(db);
}

/**
 * Pauses a relay that is not paused yet: 1 s after it worked, else twice its last pause, at most
 * 5 min. Returns the row when this call began a pause (undefined: someone else's pause holds).
 */
export async function pauseRelay(db: Db, name: string): Promise<RelayRow | undefined> {
  const now = nowOf(db, undefined);
  const next = sql<number>`(case when pause_ms = 0 then ${PAUSE_FIRST_MS} when pause_ms * 2 > ${PAUSE_MAX_MS} then ${PAUSE_MAX_MS} else pause_ms * 2 end)`;
  const { rows } = await sql<RelayRow>`
    update relays set pause_ms = ${next}, paused_until = ${now} + ${next}
    where name = ${name} and paused_until <= ${now}
    returning name, next_at, paused_until, pause_ms, ${now} as now`.execute(db);
  return rows[0] && numeric(rows[0]);
}

/** Marks a relay as working again after its pause; true for the one caller that did. */
export async function resumeRelay(db: Db, name: string): Promise<boolean> {
  const now = nowOf(db, undefined);
  const { rows } =
    await sql`update relays set pause_ms = 0 where name = ${name} and pause_ms > 0 and paused_until <= ${now} returning name`.execute(db);
  return rows.length > 0;
}
