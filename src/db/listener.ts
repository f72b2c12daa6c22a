import pg from 'pg';

/** The listening connection's `application_name`, as `pg_stat_activity` shows it. */
export const LISTENER_APP = 'campaign-listener';

/** How long to wait before connecting again after the connection was lost. */
const RETRY_MS = 1000;

/**
 * A silent connection is not proof that nothing was sent (a network can drop packets without
 * closing the socket): every `HEARTBEAT_MS` the connection runs a query, which also delivers
 * every notification committed before it; without an answer within `HEARTBEAT_DEADLINE_MS` the
 * connection counts as lost.
 */
const HEARTBEAT_MS = 2000;
const HEARTBEAT_DEADLINE_MS = 1000;

/** PostgreSQL channel names we use: plain lower-case identifiers, so they need no quoting. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** The process's one PostgreSQL connection that LISTENs, shared by every channel. */
export interface Listener {
  /**
   * Calls `onNotify` with the payload of each notification on `channel` (from any process) while
   * the connection listens. Notifications sent while it is down are lost: see `losses`. Returns
   * the function that stops this subscription.
   */
  listen(channel: string, onNotify: (payload: string | undefined) => void): () => void;
  /** True while the connection is up and LISTENs on every subscribed channel. */
  isListening(): boolean;
  /**
   * How many times the connection was lost. A subscriber that keeps state derived from
   * notifications treats a change of this number as "something may have been missed".
   */
  losses(): number;
  close(): Promise<void>;
}

/**
 * Opens the listening connection and keeps it: on an error, an end, or a heartbeat that goes
 * unanswered, it drops the connection, counts a loss, and connects again after `RETRY_MS`,
 * LISTENing again on every subscribed channel.
 */
export function createListener(connectionString: string): Listener {
  const handlers = new Map<string, Set<(payload: string | undefined) => void>>();
  let losses = 0;
  /** Connected, and LISTENing on every channel subscribed before the connection was made. */
  let listening = false;
  /** LISTEN commands for channels subscribed since, still on their way. */
  let pending = 0;
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    listening = false;
    pending = 0;
    losses++;
    clearInterval(heartbeat);
    c.end().catch(() => undefined);
    if (!closed) retry = setTimeout(connect, RETRY_MS).unref();
  };
  const beat = (c: pg.Client) => {
    const deadline = setTimeout(() => lost(c), HEARTBEAT_DEADLINE_MS).unref();
    c.query('select 1').then(
      () => clearTimeout(deadline),
      () => lost(c),
    );
  };
  const connect = async () => {
    const c = new pg.Client({ connectionString, keepAlive: true, application_name: LISTENER_APP });
    client = c;
    c.on('notification', (n) => {
      for (const onNotify of handlers.get(n.channel) ?? []) onNotify(n.payload);
    });
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      for (const channel of handlers.keys()) await c.query(`LISTEN ${channel}`);
      if (client !== c || closed) return;
      listening = true;
      heartbeat = setInterval(() => beat(c), HEARTBEAT_MS).unref();
    } catch {
      lost(c);
    }
  };
  void connect();

  return {
    listen(channel, onNotify) {
      if (!CHANNEL.test(channel)) throw new Error(`listener: "${channel}" is not a plain channel name`);
      let set = handlers.get(channel);
      if (!set) {
        handlers.set(channel, (set = new Set()));
        // Already connected: listen now; until this completes the connection does not count as
        // listening. Otherwise the next connect listens on it.
        const c = client;
        if (c && listening) {
          pending++;
          c.query(`LISTEN ${channel}`).then(
            () => {
              if (client === c) pending--;
            },
            () => lost(c),
          );
        }
      }
      set.add(onNotify);
      return () => {
        set.delete(onNotify);
      };
    },
    isListening: () => listening && pending === 0,
    losses: () => losses,
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
