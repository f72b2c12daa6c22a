import { loadConfig, type Config } from './config.js';
import { createDb } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { buildApp } from './app.js';
import { bootstrapAccount } from './modules/accounts/accounts.service.js';
import { createTransport } from './delivery/transports.js';
import { startJobs } from './lanes.js';
import { startInboundSmtp } from './inbound/smtp-listener.js';
import { MAIL_KINDS } from './mail-kinds.js';
import { runEntry, StartError, stopOnSignals } from './ops/process.js';

/** The one-line explanation of a failure to listen, or null for an unexpected one. */
function listenProblem(err: unknown, config: Config): string | null {
  const where = `${config.port} on ${config.host}`;
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return `Port ${where} is already in use; set PORT to another port.`;
    case 'EACCES':
      return `Port ${where} needs privileges this process does not have; set PORT to 1024 or above.`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${config.host}: no such address on this machine; set HOST to one of its addresses.`;
    default:
      return null;
  }
}

/**
 * Process entry: config → db → migrate → http, and the job runner (scheduler, mail and webhook
 * lanes) in the same process (on SQLite the only one; on PostgreSQL one among any `npm run
 * worker`), and the inbound SMTP listener for bounces when `INBOUND_SMTP_PORT` is set; graceful
 * shutdown on SIGINT/SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = createDb(config.databaseUrl, { server: true });
  await migrateToLatest(database.db, { appSecret: config.appSecret });
  const keys = await bootstrapAccount(database.db, config);
  if (keys) {
    console.log('First start: created an account. Keep these keys; they are shown only once.');
    console.log(JSON.stringify(keys));
    if (keys.owner_link)
      console.log(`The owner (${config.ownerEmail}) sets a name and password at this link, once, within 7 days: ${keys.owner_link}`);
  }
  const transport = createTransport(config);
  const app = await buildApp({ config, database, transport, logger: { level: config.logLevel } });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const problem = listenProblem(err, config);
    if (!problem) throw err;
    throw new StartError(problem);
  }
  // A wrong SMTP_URL should be visible at start, but not stop the API: mail is retried later.
  transport.verify().then(
    () => app.log.info({ transport: config.smtpUrl ? 'smtp' : 'outbox' }, 'mail transport ready'),
    (err) => app.log.warn({ err }, 'mail transport check failed'),
  );
  const jobs = startJobs(app.deps);
  let inbound: Awaited<ReturnType<typeof startInboundSmtp>> | null = null;
  if (config.inboundSmtpPort !== null) {
    try {
      inbound = await startInboundSmtp(app.deps, MAIL_KINDS);
    } catch (err) {
      await Promise.all([app.close(), jobs.stop()]);
      throw new StartError(`Cannot listen for bounces on port ${config.inboundSmtpPort} (INBOUND_SMTP_PORT): ${(err as Error).message}`);
    }
  }

  stopOnSignals(app.log, async () => {
    // The runner finishes or releases the messages it holds while the server stops taking requests.
    await Promise.all([app.close(), jobs.stop(), inbound?.close()]);
    await transport.close();
    await database.close();
  });
}

runEntry(main);
