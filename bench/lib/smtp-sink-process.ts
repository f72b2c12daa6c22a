/**
 * A local SMTP sink for benchmarks, run as its own process (`node --import tsx
 * bench/lib/smtp-sink-process.ts`) so its CPU never counts against the sender measured. It
 * accepts every message (no AUTH, no STARTTLS), drains the data without keeping it, and counts
 * messages per envelope recipient (lower-cased). A tiny HTTP endpoint reports the counts:
 * `GET /total` → `{ messages, bytes }`, `GET /counts` → `{ "<address>": n, … }`,
 * `GET /arrivals` → `[ms, …]` (the wall-clock time each message arrived: rate checks per window),
 * `POST /reset` forgets everything. Prints `SINK_READY <smtp port> <http port>` once listening.
 * A message is counted when its data has arrived, before the 250 reply: a message the client saw
 * accepted is always counted.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

let counts = new Map<string, number>();
let messages = 0;
let bytes = 0;
let arrivals: number[] = [];

const smtp = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  // The pool opens a few connections; many clients (chaos restarts) may leave dead ones behind.
  maxClients: 1000,
  size: 0,
  onData(stream, session, cb) {
    let n = 0;
    stream.on('data', (c: Buffer) => (n += c.length));
    stream.on('end', () => {
      messages++;
      bytes += n;
      arrivals.push(performance.timeOrigin + performance.now());
      for (const r of session.envelope.rcptTo) {
        const key = r.address.toLowerCase();
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      cb(null);
    });
  },
});
smtp.on('error', () => {});

const http = createServer((req, res) => {
  const send = (body: unknown) => {
    // One connection per request: a kept-alive socket the server closes after 5 s idle can be
    // reused by the client at that very moment ("other side closed") after a long bench step.
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && req.url === '/total') return send({ messages, bytes });
  if (req.method === 'GET' && req.url === '/counts') return send(Object.fromEntries(counts));
  if (req.method === 'GET' && req.url === '/arrivals') return send(arrivals);
  if (req.method === 'POST' && req.url === '/reset') {
    counts = new Map();
    messages = 0;
    bytes = 0;
    arrivals = [];
    return send({ ok: true });
  }
  res.writeHead(404).end();
});

await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
const smtpPort = (smtp.server.address() as AddressInfo).port;
const httpPort = (http.address() as AddressInfo).port;
console.log(`SINK_READY ${smtpPort} ${httpPort}`);
process.on('SIGTERM', () => process.exit(0));
