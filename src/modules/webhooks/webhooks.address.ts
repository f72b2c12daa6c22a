import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The failure of a URL whose host is, or resolves to, an address that is not public. */
export const PRIVATE_ADDRESS = 'The url must not point to a private address.';
/** The failure of a URL whose host name does not resolve. */
export const UNRESOLVED_HOST = 'The url host name does not resolve.';

/**
 * Whether an address may receive webhooks: only ordinary public unicast. Loopback, private,
 * link-local, unique-local, unspecified, carrier-grade NAT, multicast, broadcast and every reserved
 * or special-purpose range are refused; an IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is
 * judged as the IPv4 address it is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
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
