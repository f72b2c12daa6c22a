/**
 * `npm run bench:clicks`: redirects/s of the click route (`GET /t/click/<token>`) with genuine
 * tokens of 10,000 seeded messages × 3 tracked links (each click verifies the token, is counted
 * through the group commit — message, link, first click per link, send, hour — and answers 302
 * to the link's URL, one of the three filled with the recipient's placeholder), beside the bare
 * route and the one-write ceiling of the same server, rounds interleaved (see
 * `bench/lib/tracking-load.ts`). Targets: SQLite ≥ 0.4 of bare; PostgreSQL ≥ 1.5 × one write.
 */
import { isoMicros } from '../src/util/time.js';
import { fmt } from './lib/measure.js';
import { runTrackingBench } from './lib/tracking-load.js';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

const URLS = [
  'https://shop.bench.example.com/spring',
  'https://blog.bench.example.com/post?id=7',
  'https://bench.example.com/?who=((email))',
];

runTrackingBench({
  name: 'click redirect',
  unit: 'redirects/s',
  redirects: true,
  // A browser's agent: the scanner rules run on every click (random clicks of 10,000 messages × 3
  // links put two links of one message within 2 s often, so many are moved to the scanners).
  headers: { 'user-agent': BROWSER },
  target: { sqlite: { over: 'bare', ratio: 0.4 }, postgres: { over: 'write', ratio: 1.5 } },
  async paths(db, send, links) {
    const at = isoMicros(new Date());
    const { user_id } = await db.selectFrom('single_sends').select('user_id').where('id', '=', send.sendId).executeTakeFirstOrThrow();
    const rows = await db
      .insertInto('tracked_links')
      .values(
        URLS.map((url, position) => ({
          user_id,
          source_table: 'single_sends',
          source_id: send.sendId,
          campaign_table: 'single_sends',
          campaign_id: send.sendId,
          position,
          url,
          created_at: at,
        })),
      )
      .returning('id')
      .execute();
    return send.messageIds.flatMap((m) => rows.map((l) => `/t/click/${links.clickToken(m, l.id)}`));
  },
  async counted(db, send, answered) {
    const stats = await db
      .selectFrom('single_sends')
      .select(['total_clicks', 'unique_clicks', 'unique_opens', 'bot_clicks'])
      .where('id', '=', send.sendId)
      .executeTakeFirstOrThrow();
    const links = await db.selectFrom('tracked_links').select(['total_clicks']).where('source_id', '=', send.sendId).execute();
    const onLinks = links.reduce((n, l) => n + Number(l.total_clicks), 0);
    console.log(
      `counted: total_clicks ${fmt(stats.total_clicks)} (on the links ${fmt(onLinks)}) + bot_clicks ${fmt(stats.bot_clicks)} = ` +
        `${fmt(Number(stats.total_clicks) + Number(stats.bot_clicks))} for ${fmt(answered)} answered clicks, ` +
        `unique_clicks ${fmt(stats.unique_clicks)}, unique_opens ${fmt(stats.unique_opens)}`,
    );
  },
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
