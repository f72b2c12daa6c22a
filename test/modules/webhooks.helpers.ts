import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../src/db/index.js';
import { emitEvents, type EventType } from '../../src/events/outbox.js';
import type { Client } from '../helpers.js';

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP receiver on 127.0.0.1: records every request and answers with `status` (or what
 * `answer` says for a request), 200 by default.
 */
export class Receiver {
  readonly received: Received[] = [];
  status = 200;
  answer: ((r: Received) => { status: number; headers?: Record<string, string> }) | null = null;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(port = 0): Promise<Receiver> {
    const server = createServer();
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    const receiver = new Receiver(server, (server.address() as { port: number }).port);
    server.on('request', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const r = { path: req.url ?? '/', headers: req.headers, body };
        receiver.received.push(r);
        const a = receiver.answer?.(r) ?? { status: receiver.status };
        res.writeHead(a.status, a.headers).end('ok');
      });
    });
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The distinct `webhook-id`s received. */
  ids(): Set<string> {
    return new Set(this.received.map((r) => String(r.headers['webhook-id'])));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }
}

/**
 * Checks a received delivery's signature with `secret` through standardwebhooks: `verify` when
 * the delivery's timestamp is near the real time (it checks that too), else the library's own
 * signature of the same id, timestamp and body (the test clock may be days away).
 */
export function assertSigned(r: Received, secret: string): void {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  const wh = new Webhook(secret);
  if (Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 60) wh.verify(r.body, headers);
  else {
    const expected = wh.sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), r.body);
    assert.equal(headers['webhook-signature'], expected);
  }
}

/** Creates an endpoint for `c` and returns its id and secret. */
export async function createEndpoint(c: Client, url: string, events: string[] = ['*']): Promise<{ id: number; secret: string }> {
  const r = await c.post('/webhooks/endpoints/create', { url, events });
  assert.equal(r.status, 200, r.text);
  return r.body.message;
}

/** Emits `n` events of `type` for an account, in one transaction as their cause would. */
export async function emit(
  database: Database,
  userId: number,
  n = 1,
  now = new Date(),
  type: EventType = 'message.delivered',
): Promise<number> {
  return database.db.transaction().execute((trx) =>
    emitEvents(
      trx,
      now,
      Array.from({ length: n }, (_, i) => ({
        userId,
        type,
        data: { source: 'single_send', utr: 'u-1', email: `p${i}@example.com`, contact_id: i + 1, message_id: `<m${i}@x>` },
        email: `p${i}@example.com`,
      })),
    ),
  );
}
