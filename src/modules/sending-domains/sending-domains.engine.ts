import { domainToASCII } from 'node:url';
import type { AppDeps } from '../../deps.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import { isoMicros } from '../../util/time.js';
import { checkDomainRow, DOMAIN_FAILS, dnsOf } from './sending-domains.service.js';
import { domainsNamed, oldestCheck, selectDueDomains } from './sending-domains.queries.js';

/** Every domain is checked again once its last check is this old. */
export const RECHECK_MS = 60 * 60 * 1000;
/** Domains one round checks at most, and how many at once (DNS waits, so several overlap). */
const ROUND = 100;
const AT_ONCE = 10;

/**
 * The hourly re-check, a task of the scheduler lane: every domain whose last check is an hour old
 * (or that was never checked) is checked again, oldest first, ten at once. Each write is
 * conditional (`saveCheck`), so two workers never tell one change twice.
 */
export const domainRecheckTask: ScheduledTask = {
  name: 'sending-domains.recheck',
  async run(deps, now) {
    const due = await selectDueDomains(deps.database.db, isoMicros(new Date(now.getTime() - RECHECK_MS)), ROUND);
    const dns = dnsOf(deps);
    let next = 0;
    const worker = async () => {
      while (next < due.length) await checkDomainRow(deps, due[next++], dns);
    };
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, due.length) }, worker));
    return due.length;
  },
  async nextDueAt(deps, now) {
    const { any, oldest } = await oldestCheck(deps.database.db);
    if (!any) return null;
    return oldest === null ? now : new Date(Date.parse(oldest) + RECHECK_MS);
  },
};

/** The domain of an address as sending domains keep it (A-label, lower case); null when it has none. */
export function domainOfAddress(email: string): string | null {
  const at = email.lastIndexOf('@');
  const ascii =
    at < 0
      ? ''
      : domainToASCII(
          email
            .slice(at + 1)
            .trim()
            .replace(/\.$/, ''),
        );
  return ascii || null;
}

/** The status of the sending domain of a sender's address: `none` when the account has none for it. */
export async function senderDomainStatus(deps: AppDeps, userId: number, fromEmail: string): Promise<string> {
  const domain = domainOfAddress(fromEmail);
  if (!domain) return 'none';
  const [row] = await domainsNamed(deps.database.db, userId, [domain]);
  return row?.status ?? 'none';
}

/**
 * The guard of a mailing that would start or be scheduled: the failure text when the sender's
 * domain is a sending domain of the account whose check failed, else null (a domain with no
 * sending domain is not blocked).
 */
export async function senderDomainFailure(deps: AppDeps, userId: number, fromEmail: string): Promise<string | null> {
  return (await senderDomainStatus(deps, userId, fromEmail)) === 'failed' ? DOMAIN_FAILS : null;
}
