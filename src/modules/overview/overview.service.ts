import type { AppDeps } from '../../deps.js';
import { isoMicros } from '../../util/time.js';
import { dailyEngagement, messageFigures, runningSends } from './overview.queries.js';

const DAY_MS = 86_400_000;

/**
 * The account's campaign figures of the last `days` UTC days (today included): the messages
 * queued in that window and what became of them, the engagement per day, and the sends running now.
 */
export async function accountOverview({ database: { db }, clock }: AppDeps, userId: number, days: number) {
  const today = Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth(), clock.now().getUTCDate());
  const start = new Date(today - (days - 1) * DAY_MS);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const [figures, engagement, inProgress] = await Promise.all([
    messageFigures(db, userId, isoMicros(start)),
    dailyEngagement(db, userId, `${day(start.getTime())} 00:00:00`),
    runningSends(db, userId),
  ]);
  const byDay = new Map(engagement.map((d) => [d.day, d]));
  const daily = Array.from({ length: days }, (_, i) => {
    const d = day(start.getTime() + i * DAY_MS);
    return byDay.get(d) ?? { day: d, delivered: 0, opens: 0, clicks: 0 };
  });
  const rate = (n: number) => (figures.delivered ? Math.round((n / figures.delivered) * 10_000) / 10_000 : 0);
  return {
    days,
    since: isoMicros(start),
    ...figures,
    open_rate: rate(figures.unique_opens),
    click_rate: rate(figures.unique_clicks),
    daily,
    in_progress: inProgress,
  };
}
