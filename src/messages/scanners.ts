/**
 * Which clicks of one message are scanners' (security gateways and link checkers follow links
 * without a person): the rules on the message's clicks close together in time, as data and pure
 * functions. docs/engagement.md gives their thresholds' sources.
 */
import { TRAP_LINK } from './events.js';

/** A click on the trap link makes every click of the message within this time before or after it a scanner's. */
export const TRAP_WINDOW_MS = 60_000;

/** Two different links of one message clicked within this time of each other: both clicks are a scanner's. */
export const BURST_WINDOW_MS = 2_000;

/** A click of the message already recorded, within `TRAP_WINDOW_MS` of the new ones. */
export interface SeenClick {
  id: number;
  link: number;
  /** Epoch milliseconds. */
  at: number;
  bot: boolean;
}

/** A click of the message being recorded now. */
export interface NewClick {
  link: number;
  at: number;
  /** Its agent alone shows it is a scanner's. */
  scanner: boolean;
}

/** What the rules decide for one message's new clicks. */
export interface ScannerVerdict {
  /** For each new click, in order: a scanner's. */
  bot: boolean[];
  /** The ids of clicks recorded as a person's that the new clicks show to be a scanner's. */
  moved: number[];
}

/** Whether clicks `a` and `b` (of one message) together show a scanner: a trap click near the other, or a burst over two links. */
function together(a: { link: number; at: number }, b: { link: number; at: number }): boolean {
  const apart = Math.abs(a.at - b.at);
  if ((a.link === TRAP_LINK || b.link === TRAP_LINK) && apart <= TRAP_WINDOW_MS) return true;
  return a.link !== b.link && apart <= BURST_WINDOW_MS;
}

/**
 * Applies the rules to one message's new clicks, given its clicks already recorded around them: a
 * new click is a scanner's when its agent says so, when it is on the trap link, when a trap click
 * comes within `TRAP_WINDOW_MS` of it, or when a click on another link comes within
 * `BURST_WINDOW_MS`; a recorded person's click is moved to the scanners when a new click does
 * that to it. A scanner's click never becomes a person's.
 */
export function judgeClicks(seen: readonly SeenClick[], fresh: readonly NewClick[]): ScannerVerdict {
  const bot = fresh.map(
    (c, i) =>
      c.scanner || c.link === TRAP_LINK || seen.some((s) => together(c, s)) || fresh.some((other, j) => j !== i && together(c, other)),
  );
  const moved = seen.filter((s) => !s.bot && fresh.some((c) => together(s, c))).map((s) => s.id);
  return { bot, moved };
}
