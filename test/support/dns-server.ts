import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

/** The records of one name in a test zone. */
export interface ZoneEntry {
  /** TXT records; each is one string (split into 255-byte pieces on the wire) or its pieces. */
  TXT?: Array<string | string[]>;
  MX?: Array<{ priority: number; exchange: string }>;
  A?: string[];
  CNAME?: string;
  /** Answer SERVFAIL for this name. */
  servfail?: boolean;
  /** Never answer for this name. */
  silent?: boolean;
  /** Answer after this many milliseconds. */
  delayMs?: number;
}

/** Names (lower case, no trailing dot) and their records; a name not in it is NXDOMAIN. */
export type Zone = Record<string, ZoneEntry>;

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 };
const TRUNCATED = 1 << 9;
const AUTHORITATIVE = 1 << 10;

/** A TXT string in pieces of at most 255 bytes, as DNS carries it. */
function pieces(text: string): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

/**
 * A small authoritative DNS server on loopback (UDP and TCP on one port) for the tests: each test
 * sets its zone, which answers TXT, MX, A and CNAME (chains followed as a recursive server
 * would), NXDOMAIN for unknown names, SERVFAIL, silence or a delay where the zone says so. A
 * UDP answer over 512 bytes is truncated (TC), so the client asks again over TCP, as with a real
 * server. `queries` counts every question asked.
 */
export class TestDnsServer {
  zone: Zone = {};
  queries = 0;
  private timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly udp: dgram.Socket,
    private readonly tcp: net.Server,
    readonly port: number,
  ) {}

  /** Starts the server on 127.0.0.1 (a free port, the same for UDP and TCP). */
  static async start(): Promise<TestDnsServer> {
    for (let attempt = 0; ; attempt++) {
      const udp = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
      const port = udp.address().port;
      const tcp = net.createServer();
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen(port, '127.0.0.1', resolve);
        });
      } catch (err) {
        udp.close();
        if (attempt > 20) throw err;
        continue;
      }
      const server = new TestDnsServer(udp, tcp, port);
      server.listen();
      return server;
    }
  }

  /** `host:port`, as DNS_SERVERS takes it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private listen(): void {
    this.udp.on('message', (msg, rinfo) =>
      this.answer(msg, (res) => {
        let out = dnsPacket.encode(res);
        if (out.length > 512) out = dnsPacket.encode({ ...res, flags: (res.flags ?? 0) | TRUNCATED, answers: [] });
        this.udp.send(out, rinfo.port, rinfo.address);
      }),
    );
    this.tcp.on('connection', (socket) => {
      let buffered = Buffer.alloc(0);
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
          const len = buffered.readUInt16BE(0);
          const msg = buffered.subarray(2, 2 + len);
          buffered = buffered.subarray(2 + len);
          this.answer(msg, (res) => {
            if (!socket.destroyed) socket.write(dnsPacket.streamEncode(res));
          });
        }
      });
    });
  }

  private answer(msg: Buffer, reply: (res: dnsPacket.Packet) => void): void {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    this.queries++;
    const q = query.questions?.[0];
    if (!q) return;
    const name = q.name.toLowerCase().replace(/\.$/, '');
    const answers: dnsPacket.Answer[] = [];
    let current = name;
    let entry = this.zone[current];
    for (let hops = 0; entry?.CNAME && q.type !== 'CNAME' && hops < 16; hops++) {
      answers.push({ type: 'CNAME', name: current, ttl: 60, data: entry.CNAME });
      current = entry.CNAME.toLowerCase().replace(/\.$/, '');
      entry = this.zone[current];
    }
    if (entry?.silent) return;
    let rcode = entry || answers.length ? RCODE.NOERROR : RCODE.NXDOMAIN;
    if (entry?.servfail) rcode = RCODE.SERVFAIL;
    else if (entry) answers.push(...this.records(current, q.type, entry));
    const res: dnsPacket.Packet = {
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | AUTHORITATIVE | rcode,
      questions: [q],
      answers: rcode === RCODE.SERVFAIL ? [] : answers,
    };
    if (entry?.delayMs) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        reply(res);
      }, entry.delayMs);
      this.timers.add(timer);
    } else reply(res);
  }

  private records(name: string, type: string, entry: ZoneEntry): dnsPacket.Answer[] {
    if (type === 'TXT')
      return (entry.TXT ?? []).map((t) => ({
        type: 'TXT',
        name,
        ttl: 60,
        data: typeof t === 'string' ? pieces(t) : t.map((p) => Buffer.from(p)),
      }));
    if (type === 'MX')
      return (entry.MX ?? []).map((m) => ({ type: 'MX', name, ttl: 60, data: { preference: m.priority, exchange: m.exchange } }));
    if (type === 'A') return (entry.A ?? []).map((a) => ({ type: 'A', name, ttl: 60, data: a }));
    return [];
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    await new Promise<void>((resolve) => this.udp.close(() => resolve()));
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
  }
}
