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
 * A question with a bound: c-ares' own timeout and tries, and a deadline over them, so a server
 * that never answers costs the caller at most `DNS_QUESTION_MS` (c-ares ends the question itself
 * soon after; it is not cancelled, which would cancel the resolver's other questions too).
 */
async function ask<T>(question: () => Promise<T[]>): Promise<Answer<T>> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Answer<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'unanswered', code: 'ETIMEOUT' }), DNS_QUESTION_MS);
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
 * DNS through `node:dns`, to `servers` (`host:port`, DNS_SERVERS) or the system's resolvers: one
 * resolver (one c-ares channel) for every question of this instance. TXT strings of one record
 * are joined (a record longer than 255 characters comes in pieces).
 */
export function systemDns(servers: readonly string[]): Dns {
  const r = new Resolver({ timeout: DNS_TRY_MS, tries: 2 });
  if (servers.length > 0) r.setServers([...servers]);
  return {
    txt: (name) => ask(async () => (await r.resolveTxt(name)).map((chunks) => chunks.join(''))),
    mx: (name) => ask(() => r.resolveMx(name)),
    address: async (name) => {
      const v4 = await ask(() => r.resolve4(name));
      return v4.kind !== 'none' ? v4 : ask(() => r.resolve6(name));
    },
  };
}
