import pg from 'pg';

/** The channel the `accounts` trigger notifies on every change (migration 006). */
export const ACCOUNTS_CHANNEL = 'campaign_accounts';

/** The listening connection's `application_name`, as `pg_stat_activity` shows it. */
export const ACCOUNTS_WATCH_APP = 'campaign-accounts-watch';

/** How long to wait before listening again after the connection was lost. */
const RETRY_MS = 1000;

/**
 * A silent connection is not proof that nothing changed (a network can drop packets without
 * closing the socket): every `HEARTBEAT_MS` the connection runs a query, which also delivers
 * every notification committed before it; without an answer within `HEARTBEAT_DEADLINE_MS` the
 * connection counts as lost.
 */
const HEARTBEAT_MS = 2000;
const HEARTBEAT_DEADLINE_MS = 1000;

/**
 * PostgreSQL's `Database.version`: a number that changes whenever the accounts table may have
 * changed, read without a round trip. One connection of its own LISTENs on `ACCOUNTS_CHANNEL`; a
 * trigger notifies it on every insert, update, delete or truncate of `accounts`, by any process.
 * A change counts from the moment its notification arrives (on one host, well under a millisecond
 * after the commit). While the connection is down, or stops answering its heartbeat, there is no
 * version (undefined), so nothing is remembered; the number moves on when the connection is lost,
 * so what was remembered before stays stale once listening starts again.
 */
export function watchAccounts(connectionString: string): { version: () => number | undefined; close: () => Promise<void> } {
  let version = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    listening = false;
    version++;
    clearInterval(heartbeat);
    c.end().catch(() => undefined);
    if (!closed) retry = setTimeout(listen, RETRY_MS).unref();
  };
  const beat = (c: pg.Client) => {
    const deadline = setTimeout(() => lost(c), HEARTBEAT_DEADLINE_MS).unref();
    c.query('select 1').then(
      () => clearTimeout(deadline),
      () => lost(c),
    );
  };
  const listen = async () => {
    const c = new pg.Client({ connectionString, keepAlive: true, application_name: ACCOUNTS_WATCH_APP });
    client = c;
    c.on('notification', () => version++);
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${ACCOUNTS_CHANNEL}`);
      if (client !== c || closed) return;
      listening = true;
      heartbeat = setInterval(() => beat(c), HEARTBEAT_MS).unref();
    } catch {
      lost(c);
    }
  };
  void listen();

  return {
    version: () => (listening ? version : undefined),
    close: async () => {
      closed = true;
      listening = false;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
