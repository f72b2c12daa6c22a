/**
 * `npm run bench:media`: the media library.
 *
 * 1. Serving: req/s of a 100 KB image's public URL (`GET /media/<token>/<file>`, from the
 *    in-process cache after the first request), beside a static-file route serving the very same
 *    bytes from disk (`GET /bench/static/<file>`, @fastify/static with the same immutable cache
 *    header) on the same server, rounds interleaved; the ratio per round and its median
 *    (target ≥ 0.5). Also the image with the cache off (`MEDIA_CACHE_MB=0`: every request reads the
 *    database), printed beside it: the figure the cache buys (docs/decisions.md).
 * 2. Uploads (the compiled server, `npm run build`'s `dist/`, rebuilt first unless BENCH_BUILD=0): 50 concurrent `POST /media/upload` of 2 MB photos (12 megapixels; distinct files, the same
 *    pixels) to a server
 *    run as `npm start` runs it (`MALLOC_ARENA_MAX=2`, `--max-old-space-size=128`); the server's peak
 *    RSS (VmHWM, target ≤ 400 MB), and every upload answered 200 and stored (none lost).
 *
 * Knobs: BENCH_DURATION (5 s), BENCH_RUNS (3), BENCH_CONNECTIONS (10), BENCH_ENGINES
 * (sqlite,postgres), BENCH_UPLOADS (50), BENCH_PIN=0.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { benchDatabase, pgReachable, seedAccount, type Engine } from './lib/db.js';
import { runLoad } from './lib/load.js';
import { fmt, median, peakRssKb, printFigure, resetPeakRss } from './lib/measure.js';
import { PRODUCTION_ENTRY, startServer } from './lib/server.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 50);
const PIN_CPU = process.env.BENCH_PIN === '0' ? undefined : availableParallelism() - 1;

/** A photo-like JPEG of `width` × `height`: blurred noise (a photo's detail, so it does not compress to nothing). */
async function photo(width: number, height: number, quality: number, sigma = 15): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#6a8', noise: { type: 'gaussian', mean: 128, sigma } } })
    .blur(0.5)
    .jpeg({ quality })
    .toBuffer();
}

/** `jpeg` with a comment segment naming `n` after its start marker: distinct bytes, the same pixels. */
function numbered(jpeg: Buffer, n: number): Buffer {
  const text = Buffer.from(`photo ${n}`);
  const head = Buffer.from([0xff, 0xfe, 0, 0]);
  head.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), head, text, jpeg.subarray(2)]);
}

async function upload(url: string, headers: Record<string, string>, bytes: Buffer, name: string) {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), name);
  const r = await fetch(`${url}/media/upload`, { method: 'POST', headers, body: form });
  return { status: r.status, body: (await r.json()) as { message?: { media?: { url: string; size: number } } } };
}

async function serving(engine: Engine): Promise<void> {
  const bench = await benchDatabase(engine);
  const dir = mkdtempSync(join(tmpdir(), 'campaign-bench-media-'));
  const server = await startServer({ env: { DATABASE_URL: bench.url, BENCH_STATIC_DIR: dir }, cpu: PIN_CPU });
  const uncached = await startServer({ env: { DATABASE_URL: bench.url, MEDIA_CACHE_MB: '0' }, cpu: PIN_CPU });
  try {
    const { headers } = await seedAccount(bench.db);
    // About 100 KB once stored (the upload is encoded again at quality 85).
    const r = await upload(server.url, headers, await photo(560, 420, 90, 30), 'hundred.jpg');
    if (r.status !== 200 || !r.body.message?.media) throw new Error(`upload failed: ${JSON.stringify(r.body)}`);
    const path = new URL(r.body.message.media.url).pathname;
    const bytes = Buffer.from(await (await fetch(server.url + path)).arrayBuffer());
    writeFileSync(join(dir, 'hundred.jpg'), bytes);
    console.log(
      `\n== ${engine}: serving a ${fmt(bytes.length / 1024)} KB image, ${RUNS} rounds × ${DURATION} s, ${CONNECTIONS} connections`,
    );
    const load = (url: string, p: string) => runLoad({ url, path: p, connections: CONNECTIONS, duration: DURATION });
    await load(server.url, '/bench/static/hundred.jpg');
    await load(server.url, path);
    await load(uncached.url, path);
    const statics: number[] = [];
    const media: number[] = [];
    const ratios: number[] = [];
    const nocache: number[] = [];
    for (let round = 1; round <= RUNS; round++) {
      const s = await load(server.url, '/bench/static/hundred.jpg');
      const m = await load(server.url, path);
      const n = await load(uncached.url, path);
      statics.push(s.rps);
      media.push(m.rps);
      nocache.push(n.rps);
      ratios.push(m.rps / s.rps);
      console.log(
        `round ${round}: static file ${fmt(s.rps)} req/s (p99 ${s.p99} ms), media ${fmt(m.rps)} req/s (p99 ${m.p99} ms), ` +
          `ratio ${(m.rps / s.rps).toFixed(2)}; media without the cache ${fmt(n.rps)} req/s (p99 ${n.p99} ms)`,
      );
    }
    printFigure('media image (median)', median(media), { label: 'static file', value: median(statics) }, 'req/s');
    printFigure('media, no cache (median)', median(nocache), { label: 'static file', value: median(statics) }, 'req/s');
    const m = median(ratios);
    console.log(
      `media ÷ static per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${m.toFixed(2)} (target ≥ 0.50 ${m >= 0.5 ? 'met' : 'MISSED'})`,
    );
  } finally {
    await server.stop();
    await uncached.stop();
    await bench.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function uploads(engine: Engine): Promise<void> {
  const bench = await benchDatabase(engine);
  // As `npm start` runs the server: the allocator's arenas bounded, the JavaScript heap at 128 MB.
  const dataDir = mkdtempSync(join(tmpdir(), 'campaign-bench-media-data-'));
  // The compiled server with `npm start`'s node flags (startServer reads them from package.json);
  // `info` for pino's "Server listening at <url>" line, which startServer waits for.
  const server = await startServer({
    entry: PRODUCTION_ENTRY,
    env: { DATABASE_URL: bench.url, DATA_DIR: dataDir, LOG_LEVEL: 'info', MALLOC_ARENA_MAX: '2', MEDIA_QUOTA_MB: '100000' },
    cpu: PIN_CPU,
  });
  try {
    const { headers } = await seedAccount(bench.db);
    const base = await photo(4000, 3000, 75);
    const photos = Array.from({ length: UPLOADS }, (_, i) => numbered(base, i));
    const mb = photos.reduce((n, p) => n + p.length, 0) / UPLOADS / 1024 / 1024;
    console.log(`\n== ${engine}: ${UPLOADS} concurrent uploads of ${mb.toFixed(2)} MB photos (4000 × 3000)`);
    const before = peakRssKb(server.pid);
    resetPeakRss(server.pid);
    const started = Date.now();
    const answers = await Promise.all(photos.map((p, i) => upload(server.url, headers, p, `photo-${i}.jpg`)));
    const ms = Date.now() - started;
    const peak = peakRssKb(server.pid);
    const ok = answers.filter((a) => a.status === 200).length;
    const stored = await bench.db
      .selectFrom('media')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    console.log(
      `answered 200: ${ok} of ${UPLOADS}; stored: ${Number(stored.n)}; ${fmt(ms)} ms in all (${fmt((UPLOADS / ms) * 1000, 1)} uploads/s); ` +
        `server peak RSS ${fmt(peak / 1024)} MB (before ${fmt(before / 1024)} MB) (target ≤ 400 MB ${peak / 1024 <= 400 ? 'met' : 'MISSED'}; ` +
        `none lost ${ok === UPLOADS && Number(stored.n) === UPLOADS ? 'met' : 'MISSED'})`,
    );
    const refused = answers.find((a) => a.status !== 200);
    if (refused) console.log(`a refused upload: ${refused.status} ${JSON.stringify(refused.body)}`);
  } finally {
    await server.stop();
    await bench.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY !== 'serving' && process.env.BENCH_BUILD !== '0') {
    execSync('npx tsc -p tsconfig.build.json', { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  }
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !(await pgReachable())) {
      console.log('\n== postgres: not reachable, skipped');
      continue;
    }
    if (process.env.BENCH_ONLY !== 'uploads') await serving(engine);
    if (process.env.BENCH_ONLY !== 'serving') await uploads(engine);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
