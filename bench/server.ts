/**
 * The server process the benchmarks start: the production app (buildApp on DATABASE_URL, migrated),
 * plus — only when BENCH_BARE_ROUTE=1 — a public `GET /bench/bare` on the same Fastify instance,
 * the baseline the API figures are compared with, `GET /bench/one-query` (one indexed lookup),
 * `GET /bench/one-write` (one single-row UPDATE committed) and
 * `GET /bench/contacts-page-no-total` (a contact list page without its total). With BENCH_WORKER=1
 * it also runs the job runner's scheduler and mail lanes in the process, as `npm start` does
 * (transport from SMTP_URL), and prints `BENCH_WORKER {"inFlightWindow":…}`; with BENCH_WEBHOOKS=1
 * the webhook lane; with BENCH_STATIC_DIR=<folder> a static-file route `GET /bench/static/<file>`
 * (@fastify/static, the files of that folder; bench:media's baseline). Keeping this here leaves
 * src/ free of bench hooks.
 * Prints `BENCH_READY <url>` on stdout once it listens (PORT=0 picks a free port).
 */
import fastifyStatic from '@fastify/static';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTransport } from '../src/delivery/transports.js';
import { sendList } from '../src/http/list.js';
import { ListContactsQuery } from '../src/modules/contacts/contacts.schema.js';
import { listContacts } from '../src/modules/contacts/contacts.service.js';
import { startJobs, type LaneName } from '../src/lanes.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const database = createDb(config.databaseUrl, { server: true });
  await migrateToLatest(database.db);
  const logger = config.logLevel === 'silent' ? false : { level: config.logLevel };
  const transport = createTransport(config);
  const app = await buildApp({ config, database, transport, logger });
  if (process.env.BENCH_BARE_ROUTE === '1') {
    // Same instance, same global hooks (auth skip, input normalisation, compression check):
    // the cost of Fastify itself, without a database or a schema.
    app.get('/bench/bare', { config: { public: true } }, async () => ({ status: 'success', message: 'bare' }));
    // The least any route that reads the database does: one indexed lookup through the read path of
    // auth and details (PostgreSQL: one round trip), no auth. Its ratio to bare is the ceiling for
    // details on this machine and engine.
    const lookup = database.db.selectFrom('accounts').select('id').where('id', '=', 1).compile();
    app.get('/bench/one-query', { config: { public: true } }, async () => ({
      status: 'success',
      message: (await database.read(lookup)).length,
    }));
    // The least a durable write per request costs: one single-row UPDATE, committed before the
    // answer, no token and no lookup. Its ratio to bare is the ceiling for the open pixel. The row
    // is a reserved field (always there; its table has no triggers, unlike `accounts`, whose
    // changes notify every server).
    app.get('/bench/one-write', { config: { public: true } }, async () => {
      await database.db.updateTable('fields').set({ updated_at: new Date().toISOString() }).where('id', '=', 1).execute();
      return { status: 'success', message: 'written' };
    });
    // The contact list's page without its total: the same route (auth, query schema, page query,
    // contact types, envelope) with a count that costs nothing. The ceiling of a page with a total.
    app.get('/bench/contacts-page-no-total', { schema: { querystring: ListContactsQuery } }, (req, reply) =>
      sendList(reply, 'contacts', req.query as { page?: number; per_page?: number }, {
        ...listContacts(app.deps, req.userId),
        count: async () => 0,
      }),
    );
  }
  if (process.env.BENCH_STATIC_DIR) {
    // A static file server as a CDN origin or nginx would be: the same immutable cache header, an ETag.
    await app.register(async (scoped) => {
      // Public, as the media URLs are: no keys.
      scoped.addHook('onRoute', (route) => {
        route.config = { ...route.config, public: true };
      });
      await scoped.register(fastifyStatic, {
        root: process.env.BENCH_STATIC_DIR!,
        prefix: '/bench/static/',
        immutable: true,
        maxAge: '365d',
        decorateReply: false,
      });
    });
  }
  const url = await app.listen({ port: config.port, host: config.host });
  const lanes: LaneName[] = [
    ...(process.env.BENCH_WORKER === '1' ? (['scheduler', 'mail'] as const) : []),
    ...(process.env.BENCH_WEBHOOKS === '1' ? (['webhooks'] as const) : []),
  ];
  const jobs = lanes.length > 0 ? startJobs(app.deps, { lanes }) : null;
  if (jobs && lanes.includes('mail')) console.log(`BENCH_WORKER ${JSON.stringify({ inFlightWindow: jobs.inFlightWindow })}`);
  console.log(`BENCH_READY ${url}`);

  const shutdown = async () => {
    await Promise.all([app.close(), jobs?.stop()]);
    await transport.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
