/**
 * The clicked transition: every click is logged (`message_clicks`), judged with the message's
 * clicks around it (`scanners.ts`), and counted as a person's or a scanner's. A person's click
 * counts as before (the link's and the source's clicks, the first click per link and per message,
 * the open it proves); a scanner's counts in `bot_clicks` only. A person's click that a new click
 * shows to be a scanner's is moved: its counts are taken back (link, source, hour, the message's
 * first click and open, when a person last clicked and opened it) and it joins `bot_clicks`.
 *
 * The message rows are locked first (PostgreSQL: `FOR UPDATE`, ids ascending; SQLite has one
 * writer), and the log is read after, so two processes counting clicks of one message at once
 * see each other's clicks: the later one judges with the earlier one committed. Everything is
 * then written with one statement per table; moves cost a few more.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf } from '../db/dialect.js';
import { isoMicros } from '../util/time.js';
import { ascending, caseOf } from './batch.js';
import type { ClickedEvent, Counted, Indexed, LedgerContext } from './events.js';
import { TRAP_LINK } from './events.js';
import { judgeClicks, TRAP_WINDOW_MS } from './scanners.js';
import { addClicks, type ClickTimes } from './ledger.writes.js';
import { hourOf, type CounterDeltas, type EventMessage, type HourDeltas } from './sources.js';

/** What the lock reads of each message. */
interface MessageState {
  id: number;
  opens: number;
  first_opened_at: string | null;
  first_clicked_at: string | null;
  last_human_opened_at: string | null;
  last_human_clicked_at: string | null;
  human_pixel_opened_at: string | null;
}

/** A logged click near the new ones. */
interface LoggedClick {
  id: number;
  message_id: number;
  link_id: number;
  clicked_at: string;
  bot: number;
  opened: number;
}

/** What one message's new clicks do. */
interface Plan {
  state: MessageState;
  events: Array<Indexed<ClickedEvent>>;
  bot: boolean[];
  /** Logged person's clicks found to be a scanner's. */
  moved: LoggedClick[];
  /** The new click (index into `events`) that counts the message's open, or -1. */
  opens: number;
}

/** The later of two stored times (either may be null). */
const later = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

/** Locks (PostgreSQL) and reads the messages, ids ascending. */
async function lockMessages(trx: Db, ids: number[]): Promise<Map<number, MessageState>> {
  let q = trx
    .selectFrom('mail_messages')
    .select([
      'id',
      'opens',
      'first_opened_at',
      'first_clicked_at',
      'last_human_opened_at',
      'last_human_clicked_at',
      'human_pixel_opened_at',
    ])
    .where('id', 'in', ids)
    .orderBy('id');
  if (engineOf(trx) === 'postgres') q = q.forUpdate();
  const rows = await q.execute();
  return new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id), opens: Number(r.opens) }]));
}

/** The logged clicks of the messages within `TRAP_WINDOW_MS` of `now`. */
async function clicksAround(trx: Db, ids: number[], now: Date): Promise<LoggedClick[]> {
  const rows = await trx
    .selectFrom('message_clicks')
    .select(['id', 'message_id', 'link_id', 'clicked_at', 'bot', 'opened'])
    .where('message_id', 'in', ids)
    .where('clicked_at', '>=', isoMicros(new Date(now.getTime() - TRAP_WINDOW_MS)))
    .where('clicked_at', '<=', isoMicros(new Date(now.getTime() + TRAP_WINDOW_MS)))
    .execute();
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    message_id: Number(r.message_id),
    link_id: Number(r.link_id),
    bot: Number(r.bot),
    opened: Number(r.opened),
  }));
}

/** Judges each message's new clicks; decides which new click counts the message's open. */
function planClicks(
  batch: ReadonlyArray<Indexed<ClickedEvent>>,
  states: Map<number, MessageState>,
  logged: LoggedClick[],
  nowMs: number,
): Plan[] {
  const plans: Plan[] = [];
  for (const id of ascending(states.keys())) {
    const state = states.get(id)!;
    const events = batch.filter((b) => b.event.id === id);
    if (events.length === 0) continue;
    const around = logged.filter((l) => l.message_id === id);
    const verdict = judgeClicks(
      around.map((l) => ({ id: l.id, link: l.link_id, at: Date.parse(l.clicked_at), bot: l.bot === 1 })),
      events.map((e) => ({ link: e.event.link, at: nowMs, scanner: Boolean(e.event.scanner) || e.event.link === TRAP_LINK })),
    );
    const movedIds = new Set(verdict.moved);
    const moved = around.filter((l) => movedIds.has(l.id));
    // A moved click that counted the message's open takes it back; a new person's click may count it again.
    const unopened = moved.some((m) => m.opened === 1) ? state.opens - 1 <= 0 : state.first_opened_at === null;
    plans.push({ state, events, bot: verdict.bot, moved, opens: unopened ? verdict.bot.indexOf(false) : -1 });
  }
  return plans;
}

/** The first and last person's click still logged, per message and per link of it, after the moves. */
async function peopleClicks(trx: Db, messageIds: number[]) {
  const byLink = new Map<string, { first: string; last: string }>();
  const byMessage = new Map<number, { first: string; last: string }>();
  if (messageIds.length === 0) return { byLink, byMessage };
  const rows = await trx
    .selectFrom('message_clicks')
    .select(['message_id', 'link_id', sql<string>`min(clicked_at)`.as('first'), sql<string>`max(clicked_at)`.as('last')])
    .where('message_id', 'in', messageIds)
    .where('bot', '=', 0)
    .groupBy(['message_id', 'link_id'])
    .execute();
  for (const r of rows) {
    const id = Number(r.message_id);
    byLink.set(`${id}:${Number(r.link_id)}`, { first: r.first, last: r.last });
    const m = byMessage.get(id);
    byMessage.set(
      id,
      m ? { first: m.first < r.first ? m.first : r.first, last: later(m.last, r.last)! } : { first: r.first, last: r.last },
    );
  }
  return { byLink, byMessage };
}

/**
 * The links' first clicks: a link_clicks row for each message and link a person clicked first
 * now, and, for the links of moved clicks, the row taken away (no person's click of it left) or
 * its time put back to the first one left. Returns the unique clicks each link gains or loses.
 */
async function linkFirsts(
  trx: Db,
  plans: readonly Plan[],
  byLink: Map<string, { first: string; last: string }>,
  at: string,
): Promise<Map<number, number>> {
  const unique = new Map<number, number>();
  const add = (link: number, n: number) => unique.set(link, (unique.get(link) ?? 0) + n);
  const pairs = new Map<string, { message_id: number; link_id: number; first_clicked_at: string }>();
  for (const p of plans)
    p.events.forEach((e, i) => {
      if (!p.bot[i]) pairs.set(`${p.state.id}:${e.event.link}`, { message_id: p.state.id, link_id: e.event.link, first_clicked_at: at });
    });
  if (pairs.size > 0) {
    const firsts = await trx
      .insertInto('link_clicks')
      .values([...pairs.values()])
      .onConflict((oc) => oc.columns(['message_id', 'link_id']).doNothing())
      .returning('link_id')
      .execute();
    for (const r of firsts) add(Number(r.link_id), 1);
  }
  const movedPairs = new Set(
    plans.flatMap((p) => p.moved.filter((m) => m.link_id !== TRAP_LINK).map((m) => `${m.message_id}:${m.link_id}`)),
  );
  for (const key of [...movedPairs].sort()) {
    const [messageId, linkId] = key.split(':').map(Number);
    const left = byLink.get(key);
    const where = trx.updateTable('link_clicks').where('message_id', '=', messageId).where('link_id', '=', linkId);
    if (left) await where.set({ first_clicked_at: left.first }).execute();
    else {
      const gone = await trx.deleteFrom('link_clicks').where('message_id', '=', messageId).where('link_id', '=', linkId).executeTakeFirst();
      if (Number(gone.numDeletedRows) > 0) add(linkId, -1);
    }
  }
  return unique;
}

/** Records a batch of clicks (see the file's comment). Returns every click of an existing message, a scanner's `quiet`. */
export async function applyClicks(
  trx: Db,
  { kinds, now }: LedgerContext,
  batch: ReadonlyArray<Indexed<ClickedEvent>>,
): Promise<Array<Counted<ClickedEvent>>> {
  const at = isoMicros(now);
  const nowHour = hourOf(now);
  const ids = ascending(new Set(batch.map((b) => b.event.id)));
  const states = await lockMessages(trx, ids);
  if (states.size === 0) return [];
  const plans = planClicks(batch, states, await clicksAround(trx, [...states.keys()], now), now.getTime());

  await trx
    .insertInto('message_clicks')
    .values(
      plans.flatMap((p) =>
        p.events.map((e, i) => ({
          message_id: p.state.id,
          link_id: e.event.link,
          clicked_at: at,
          bot: p.bot[i] ? 1 : 0,
          opened: i === p.opens ? 1 : 0,
        })),
      ),
    )
    .execute();
  const movedIds = plans.flatMap((p) => p.moved.map((m) => m.id));
  if (movedIds.length > 0) await trx.updateTable('message_clicks').set({ bot: 1, opened: 0 }).where('id', 'in', movedIds).execute();
  const { byLink, byMessage } = await peopleClicks(
    trx,
    plans.filter((p) => p.moved.length > 0).map((p) => p.state.id),
  );
  const uniqueOnLinks = await linkFirsts(trx, plans, byLink, at);

  // The links' total clicks: new people's clicks in, moved ones out.
  const totalOnLinks = new Map<number, number>();
  const onLink = (link: number, n: number) => link !== TRAP_LINK && totalOnLinks.set(link, (totalOnLinks.get(link) ?? 0) + n);
  for (const p of plans) {
    p.events.forEach((e, i) => !p.bot[i] && onLink(e.event.link, 1));
    for (const m of p.moved) onLink(m.link_id, -1);
  }
  const links = ascending(new Set([...totalOnLinks.keys(), ...uniqueOnLinks.keys()]));
  if (links.length > 0) {
    await trx
      .updateTable('tracked_links')
      .set((eb) => ({
        total_clicks: eb('total_clicks', '+', caseOf(totalOnLinks)),
        unique_clicks: eb('unique_clicks', '+', caseOf(uniqueOnLinks)),
      }))
      .where('id', 'in', links)
      .execute();
  }

  // The messages: one statement, each row's deltas and times.
  const clicks = new Map<number, number>();
  const bots = new Map<number, number>();
  const opens = new Map<number, number>();
  const times: ClickTimes = {
    first_clicked_at: new Map(),
    last_human_clicked_at: new Map(),
    first_opened_at: new Map(),
    last_human_opened_at: new Map(),
  };
  const outcome = new Map<
    number,
    { counters: CounterDeltas; hours: Array<{ hour: string; delta: HourDeltas }>; firstClick: boolean; firstOpen: boolean }
  >();
  for (const p of plans) {
    const { state, moved } = p;
    const people = p.bot.filter((b) => !b).length;
    const scanners = p.bot.length - people;
    const tookOpen = moved.some((m) => m.opened === 1) ? 1 : 0;
    const gaveOpen = p.opens >= 0 ? 1 : 0;
    const left = byMessage.get(state.id) ?? null;
    const firstClicked = moved.length > 0 ? (left?.first ?? null) : (state.first_clicked_at ?? (people > 0 ? at : null));
    const lastClicked = people > 0 ? at : moved.length > 0 ? (left?.last ?? null) : state.last_human_clicked_at;
    const firstOpened = gaveOpen ? at : tookOpen && state.opens - 1 <= 0 ? null : state.first_opened_at;
    const lastOpened =
      people > 0 ? at : moved.length > 0 ? later(state.human_pixel_opened_at, left?.last ?? null) : state.last_human_opened_at;
    clicks.set(state.id, people - moved.length);
    bots.set(state.id, scanners + moved.length);
    opens.set(state.id, gaveOpen - tookOpen);
    times.first_clicked_at.set(state.id, firstClicked);
    times.last_human_clicked_at.set(state.id, lastClicked);
    times.first_opened_at.set(state.id, firstOpened);
    times.last_human_opened_at.set(state.id, lastOpened);
    const flip = (before: string | null, after: string | null) => (after !== null ? 1 : 0) - (before !== null ? 1 : 0);
    const hours: Array<{ hour: string; delta: HourDeltas }> = [{ hour: nowHour, delta: { clicks: people, opens: gaveOpen } }];
    for (const m of moved) hours.push({ hour: hourOf(new Date(Date.parse(m.clicked_at))), delta: { clicks: -1, opens: -m.opened } });
    outcome.set(state.id, {
      counters: {
        total_clicks: people - moved.length,
        unique_clicks: flip(state.first_clicked_at, firstClicked),
        total_opens: gaveOpen - tookOpen,
        unique_opens: flip(state.first_opened_at, firstOpened),
        unique_human_opens: flip(state.last_human_opened_at, lastOpened),
        bot_clicks: scanners + moved.length,
      },
      hours,
      firstClick: state.first_clicked_at === null && firstClicked !== null,
      firstOpen: state.first_opened_at === null && firstOpened !== null,
    });
  }
  const rows = await addClicks(
    trx,
    kinds,
    plans.map((p) => p.state.id),
    { clicks, bots, opens, times },
  );
  const messages = new Map(rows.map((m) => [Number(m.id), m as EventMessage]));

  // Each message's deltas ride on its first new click; its other clicks add nothing more.
  const counted: Array<Counted<ClickedEvent>> = [];
  for (const p of plans) {
    const message = messages.get(p.state.id);
    if (!message) continue;
    const o = outcome.get(p.state.id)!;
    p.events.forEach((e, i) =>
      counted.push({
        ...e,
        message,
        quiet: p.bot[i],
        ...(i === 0
          ? { counters: o.counters, hours: o.hours, firstClick: o.firstClick, firstOpen: o.firstOpen }
          : { counters: {}, hours: [] }),
      }),
    );
  }
  return counted;
}
