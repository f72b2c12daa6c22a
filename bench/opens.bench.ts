/**
 * `npm run bench:opens`: hits/s of the open-tracking pixel (`GET /t/open/<token>.gif`) with genuine
 * tokens of 10,000 seeded messages (each hit verifies the token and counts the open in one
 * transaction), beside the bare route (`GET /bench/bare`) of the same server, rounds interleaved,
 * and the ceiling of a route that must commit a write before it answers: `GET /bench/one-write`
 * (one single-row UPDATE, no token, no lookup).
 * The target is on the median of the per-round ratios. See bench/README.md; the knobs are
 * `bench/lib/tracking-load.ts`'s.
 */
import { fmt } from './lib/measure.js';
import { MESSAGES, runTrackingBench } from './lib/tracking-load.js';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

runTrackingBench({
  name: 'open pixel',
  unit: 'hits/s',
  // A mail client's agent: the machine-open rules run, and each open counts as a person's.
  headers: { 'user-agent': BROWSER },
  // Pixel hits/s ≥ 40% of the bare route's.
  target: { sqlite: { over: 'bare', ratio: 0.4 }, postgres: { over: 'bare', ratio: 0.4 } },
  paths: async (_db, send, links) => send.messageIds.map((id) => `/t/open/${links.openToken(id)}.gif`),
  async counted(db, send, answered) {
    // Every hit counted: the send's total against the hits autocannon saw answered (warm-up included).
    const stats = await db
      .selectFrom('single_sends')
      .select(['total_opens', 'unique_opens', 'machine_opens', 'unique_human_opens'])
      .where('id', '=', send.sendId)
      .executeTakeFirstOrThrow();
    console.log(
      `counted: total_opens ${fmt(stats.total_opens)} for ${fmt(answered)} answered hits, unique_opens ${fmt(stats.unique_opens)} of ${fmt(MESSAGES)}, ` +
        `unique_human_opens ${fmt(stats.unique_human_opens)}, machine_opens ${fmt(stats.machine_opens)}`,
    );
  },
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
