import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';

/** One message as the sink received it, parsed enough for assertions. */
export interface SinkMessage {
  /** SMTP envelope: MAIL FROM and every accepted RCPT TO. */
  envelope: { from: string; to: string[] };
  /** The AUTH user the client logged in as, if it did. */
  user: string | null;
  /** The message exactly as received (CRLF line ends). */
  raw: string;
  /** Top-level headers: lower-case name → values, unfolded, encoded words decoded. */
  headers: Record<string, string[]>;
  subject: string;
  /** The decoded text/plain and text/html parts (null when absent). */
  text: string | null;
  html: string | null;
  /** First value of a header (case-insensitive name). */
  header(name: string): string | undefined;
}

interface Rule {
  match: (address: string) => boolean;
  code: number;
  text: string;
  at: 'rcpt' | 'data';
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1 and a free port, for tests: it accepts every
 * message (with or without AUTH), keeps it parsed in `messages`, and refuses recipients on
 * demand (`reject`) with a 5xx (bounce) or 4xx (try later) reply; 421 also closes the connection
 * (a dropped connection).
 */
export class SmtpSink {
  readonly messages: SinkMessage[] = [];
  private rules: Rule[] = [];
  private drops: Array<(address: string) => boolean> = [];
  private waiters = new Set<() => void>();
  /** Milliseconds to wait before answering DATA: simulates a slow server. */
  delayMs = 0;

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  /** Starts a sink; `secure` makes it an implicit-TLS (smtps) server with a self-signed key. */
  static async start(opts: { secure?: boolean } = {}): Promise<SmtpSink> {
    let sink: SmtpSink | undefined;
    const server = new SMTPServer({
      secure: opts.secure ?? false,
      logger: false,
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: opts.secure ? [] : ['STARTTLS'],
      onAuth: (auth, _session, cb) => cb(null, { user: auth.username }),
      onRcptTo: (address, _session, cb) => sink!.checkRecipient(address, cb),
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          setTimeout(() => {
            if (sink!.dropping(session.envelope.rcptTo.map((r) => r.address))) return sink!.dropConnection(session);
            const refusal = sink!.refusal(
              'data',
              session.envelope.rcptTo.map((r) => r.address),
            );
            if (refusal) return cb(refusal);
            sink!.record(raw, session);
            cb(null);
          }, sink!.delayMs);
        });
      },
    });
    server.on('error', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sink = new SmtpSink(server, (server.server.address() as AddressInfo).port);
    return sink;
  }

  /** `smtp://127.0.0.1:<port>` (or smtps with `tls.rejectUnauthorized=false` for a secure sink). */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The URL with credentials, e.g. `smtp://user:pass@127.0.0.1:<port>`. */
  urlWith(user: string, pass: string, scheme = 'smtp'): string {
    const q = scheme === 'smtps' ? '?tls.rejectUnauthorized=false' : '';
    return `${scheme}://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${this.port}${q}`;
  }

  /**
   * Refuses mail for an address (exact, case-insensitive) or pattern: 5xx = permanent (a bounce),
   * 4xx = temporary, 421 = temporary and the connection closed. At RCPT TO by default, or after
   * DATA (`at: 'data'`: the whole message is refused). Later rules win.
   */
  reject(address: string | RegExp, code = 550, opts: { text?: string; at?: 'rcpt' | 'data' } = {}): void {
    const match = typeof address === 'string' ? (a: string) => a.toLowerCase() === address.toLowerCase() : (a: string) => address.test(a);
    const text = opts.text ?? (code >= 500 ? 'Mailbox unavailable' : 'Try again later');
    this.rules.unshift({ match, code, text, at: opts.at ?? 'rcpt' });
  }

  /**
   * Drops the connection, without a reply, once a message for the address (or pattern) has been
   * received: the client sees the socket close mid-transaction (a dropped connection), and the
   * message is not kept.
   */
  drop(address: string | RegExp): void {
    const match = typeof address === 'string' ? (a: string) => a.toLowerCase() === address.toLowerCase() : (a: string) => address.test(a);
    this.drops.unshift(match);
  }

  /** Forgets every `reject` and `drop` rule. */
  acceptAll(): void {
    this.rules = [];
    this.drops = [];
  }

  /** Forgets the messages received so far. */
  clear(): void {
    this.messages.length = 0;
  }

  /** Messages sent to `address` (envelope recipient, case-insensitive). */
  to(address: string): SinkMessage[] {
    const a = address.toLowerCase();
    return this.messages.filter((m) => m.envelope.to.some((t) => t.toLowerCase() === a));
  }

  /** The first message (already received or arriving within `timeoutMs`) matching `predicate`. */
  async waitFor(predicate: (m: SinkMessage) => boolean, timeoutMs = 5000): Promise<SinkMessage> {
    const [m] = await this.waitForCount(1, predicate, timeoutMs);
    return m;
  }

  /** Resolves once `count` messages match `predicate`; rejects after `timeoutMs`. */
  waitForCount(count: number, predicate: (m: SinkMessage) => boolean = () => true, timeoutMs = 5000): Promise<SinkMessage[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.messages.filter(predicate);
        if (found.length < count) return false;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(found.slice(0, count));
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `SmtpSink: ${this.messages.filter(predicate).length}/${count} matching messages after ${timeoutMs} ms (${this.messages.length} received)`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private dropping(addresses: string[]): boolean {
    return this.drops.some((match) => addresses.some(match));
  }

  /** Destroys the socket of the session's connection (smtp-server keeps its connections in a set). */
  private dropConnection(session: SMTPServerSession): void {
    const connections = (this.server as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> }).connections;
    for (const c of connections) if (c.id === session.id) c._socket.destroy();
  }

  private checkRecipient(address: SMTPServerAddress, cb: (err?: Error | null) => void): void {
    cb(this.refusal('rcpt', [address.address]));
  }

  /** The error of the first rule for this stage matching one of the addresses, else null. */
  private refusal(at: Rule['at'], addresses: string[]): Error | null {
    const rule = this.rules.find((r) => r.at === at && addresses.some((a) => r.match(a)));
    return rule ? Object.assign(new Error(rule.text), { responseCode: rule.code }) : null;
  }

  private record(raw: string, session: SMTPServerSession): void {
    const parsed = parseMessage(raw);
    this.messages.push({
      envelope: {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        to: session.envelope.rcptTo.map((r) => r.address),
      },
      user: typeof session.user === 'string' ? session.user : null,
      raw,
      ...parsed,
      header: (name) => parsed.headers[name.toLowerCase()]?.[0],
    });
    for (const w of [...this.waiters]) w();
  }
}

/** `=?utf-8?B?…?=` / `=?utf-8?Q?…?=` words → text. */
function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset, enc: string, text: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQp(text.replace(/_/g, ' ')),
    );
}

/** Quoted-printable → UTF-8 text. */
function decodeQp(text: string): string {
  const bytes: number[] = [];
  const s = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(s[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseHeaders(block: string): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    (headers[line.slice(0, i).trim().toLowerCase()] ??= []).push(decodeWords(line.slice(i + 1).trim()));
  }
  return headers;
}

function splitHead(raw: string): [string, string] {
  const m = /\r?\n\r?\n/.exec(raw);
  return m ? [raw.slice(0, m.index), raw.slice(m.index + m[0].length)] : [raw, ''];
}

/** Walks the MIME tree and keeps the first text/plain and text/html parts, decoded. */
function collectParts(headers: Record<string, string[]>, body: string, out: { text: string | null; html: string | null }): void {
  const type = (headers['content-type']?.[0] ?? 'text/plain').toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'][0])?.[1];
    if (!boundary) return;
    const sections = body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith('--')) break;
      const [head, partBody] = splitHead(section.replace(/^\r?\n/, ''));
      collectParts(parseHeaders(head), partBody.replace(/\r?\n$/, ''), out);
    }
    return;
  }
  const encoding = (headers['content-transfer-encoding']?.[0] ?? '7bit').toLowerCase();
  const decoded =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
      : encoding === 'quoted-printable'
        ? decodeQp(body)
        : body;
  if (type.startsWith('text/html')) out.html ??= decoded;
  else if (type.startsWith('text/plain')) out.text ??= decoded;
}

/** A received RFC 822 message → headers, subject, text and html (enough for tests; not a full MIME parser). */
export function parseMessage(raw: string): Pick<SinkMessage, 'headers' | 'subject' | 'text' | 'html'> {
  const [head, body] = splitHead(raw);
  const headers = parseHeaders(head);
  const parts = { text: null as string | null, html: null as string | null };
  collectParts(headers, body, parts);
  return { headers, subject: headers.subject?.[0] ?? '', ...parts };
}
