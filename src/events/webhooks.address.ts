import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The failure of a URL whose host is, or resolves to, an address that is not public. */
export const PRIVATE_ADDRESS = 'The url must not point to a private address.';
/** The failure of a URL whose host name does not resolve. */
export const UNRESOLVED_HOST = 'The url host name does not resolve.';

/** IPv4-compatible IPv6 (`::a.b.c.d`, deprecated): the IPv4 address in the last 32 bits. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
/** NAT64's well-known prefix (`64:ff9b::a.b.c.d`): the IPv4 address in the last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 addresses an IPv6 address carries, which is where a packet to it ends up: the last 32
 * bits of an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`),
 * IPv4-compatible (`::a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) address, the 6to4 router of
 * `2002:a.b.c.d::/48`, a Teredo address's server and (bits inverted) client. An empty list: it
 * carries none. Null: a NAT64 prefix of local use (`64:ff9b:1::/48`), where the IPv4 address sits
 * wherever the site's prefix length puts it, and the translator is the site's own.
 */
function carriedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const bytes = ip.toByteArray();
  const at = (from: number, flip = 0) => new ipaddr.IPv4(bytes.slice(from, from + 4).map((b) => b ^ flip));
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [at(12)];
    case 'rfc6052':
      return ip.match(NAT64_WELL_KNOWN) ? [at(12)] : null;
    case '6to4':
      return [at(2)];
    case 'teredo':
      return [at(4), at(12, 0xff)];
  }
  return ip.match(IPV4_COMPATIBLE) ? [at(12)] : [];
}

/**
 * Whether an address may receive webhooks: only ordinary public unicast, by ipaddr.js's ranges.
 * Loopback, private, link-local, unique-local, unspecified, carrier-grade NAT, multicast,
 * broadcast and every reserved or special-purpose range are refused. An IPv6 address that carries
 * an IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo: see carriedIPv4) is judged
 * by the IPv4 addresses it carries, since that is where it leads: `::127.0.0.1` is loopback.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const carried = carriedIPv4(ip as ipaddr.IPv6);
  if (carried === null) return false;
  if (carried.length > 0) return carried.every((v4) => v4.range() === 'unicast');
  return ip.range() === 'unicast';
}

/** A URL's host name as the resolver takes it (`[::1]` → `::1`). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Every address `host` resolves to (an IP address resolves to itself), or null when it does not
 * resolve.
 */
export async function resolveHost(host: string): Promise<string[] | null> {
  if (isIP(host)) return [host];
  return new Promise((done) =>
    dnsLookup(host, { all: true }, (err, addresses) => done(err || addresses.length === 0 ? null : addresses.map((a) => a.address))),
  );
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the sockets of webhook deliveries: resolves as `dns.lookup` does, then refuses
 * (with an error saying so) when an address the connection would use is not public. Checking the
 * address actually connected to, not the one seen when the endpoint was saved, catches a name
 * whose DNS changed since (DNS rebinding).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) return callback(privateAddressError(hostname, refused.address), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** The error of a delivery refused because its host is not public. */
export function privateAddressError(host: string, address: string): Error {
  return Object.assign(new Error(`refused: ${host} resolves to ${address}, which is not a public address`), { code: 'EPRIVATEADDRESS' });
}

/** What stands for a credential in a URL the API or a log shows. */
export const MASK = '***';

/** A query parameter's name that says its value is a secret, once camelCase is split: `access_token`, `apiKey`, `sig`, `hub.secret`. */
const SECRET_NAME =
  /(^|[^a-z])(token|secret|key|apikey|sig|signature|password|passwd|pwd|pass|auth|authorization|credentials?|code|hmac)($|[^a-z])/;

/** Whether a query parameter's name says its value is a secret. */
const isSecretName = (name: string) => SECRET_NAME.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase());

/**
 * An endpoint's URL as the API shows it: its user and password, and the values of the query
 * parameters named like a secret, replaced by `***`; the URL as saved when it holds none.
 */
export function maskedUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  let masked = false;
  if (u.username !== '' || u.password !== '') {
    u.username = MASK;
    if (u.password !== '') u.password = MASK;
    masked = true;
  }
  const params = [...u.searchParams];
  if (params.some(([name, value]) => value !== '' && isSecretName(name))) {
    u.search = new URLSearchParams(params.map(([name, value]) => [name, value !== '' && isSecretName(name) ? MASK : value])).toString();
    masked = true;
  }
  return masked ? u.toString() : url;
}
