import { Resolver } from 'node:dns/promises';

/**
 * What one DNS question got: the records, none (the name or the type does not exist), or no
 * answer at all (a timeout, SERVFAIL, a refusal), which says nothing about the domain.
 */
export type Answer<T> = { kind: 'records'; records: T[] } | { kind: 'none' } | { kind: 'unanswered'; code: string };

/** The lookups the checks make; one per check run, so a run shares nothing with another. */
export interface Dns {
  txt(name: string): Promise<Answer<string>>;
  mx(name: string): Promise<Answer<{ exchange: string; priority: number }>>;
  address(name: string): Promise<Answer<string>>;
}

/** How long one question may take in all (c-ares retries inside it), and how long one try. */
export const DNS_QUESTION_MS = 2500;
const DNS_TRY_MS = 1000;

/** The codes that say the name or the type does not exist: an answer, not a failure. */
const NONE = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'NODATA']);

/**
 * A question with a bound: c-ares' own timeout and tries, and a deadline over them (the resolver
 * is cancelled at the deadline), so a server that never answers costs at most `DNS_QUESTION_MS`.
 */
async function ask<T>(resolver: Resolver, question: () => Promise<T[]>): Promise<Answer<T>> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Answer<T>>((resolve) => {
    timer = setTimeout(() => {
      resolver.cancel();
      resolve({ kind: 'unanswered', code: 'ETIMEOUT' });
    }, DNS_QUESTION_MS);
  });
  const asked = question().then(
    (records): Answer<T> => (records.length > 0 ? { kind: 'records', records } : { kind: 'none' }),
    (err: NodeJS.ErrnoException): Answer<T> => {
      const code = String(err.code ?? 'EUNKNOWN');
      return NONE.has(code) ? { kind: 'none' } : { kind: 'unanswered', code };
    },
  );
  try {
    return await Promise.race([asked, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * DNS through `node:dns`, to `servers` (`host:port`, DNS_SERVERS) or the system's resolvers.
 * TXT strings of one record are joined (a record longer than 255 characters comes in pieces).
 * Each question gets a resolver of its own, so cancelling a late one cancels nothing else.
 */
export function systemDns(servers: readonly string[]): Dns {
  const resolver = () => {
    const r = new Resolver({ timeout: DNS_TRY_MS, tries: 2 });
    if (servers.length > 0) r.setServers([...servers]);
    return r;
  };
  return {
    txt: (name) => {
      const r = resolver();
      return ask(r, async () => (await r.resolveTxt(name)).map((chunks) => chunks.join('')));
    },
    mx: (name) => {
      const r = resolver();
      return ask(r, () => r.resolveMx(name));
    },
    address: async (name) => {
      const r = resolver();
      const v4 = await ask(r, () => r.resolve4(name));
      if (v4.kind !== 'none') return v4;
      const r6 = resolver();
      return ask(r6, () => r6.resolve6(name));
    },
  };
}
