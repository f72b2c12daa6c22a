import { domainToASCII } from 'node:url';
import type { Db } from '../db/index.js';
import { DKIM_KEY, unseal } from '../util/seal.js';
import type { MailMessage } from './transport.js';

/** How long a message from a domain whose check failed waits before it is looked at again. */
export const DOMAIN_HOLD_MS = 10 * 60 * 1000;
export const DOMAIN_HOLD_TEXT = "held: the sender's domain fails authentication (sending domains); it goes once the domain passes";

/** The domain of a message's From address as sending domains keep it (A-label, lower case). */
function fromDomain(from: MailMessage['from']): string | null {
  const address = typeof from === 'string' ? (/<([^>]*)>\s*$/.exec(from)?.[1] ?? from) : from.address;
  const at = address.lastIndexOf('@');
  return at < 0
    ? null
    : domainToASCII(
        address
          .slice(at + 1)
          .trim()
          .replace(/\.$/, ''),
      ) || null;
}

/**
 * The per-domain choice of the send path, one read per batch: a message whose From domain is a
 * verified sending domain of its account is signed with that domain's own key (`d=`, `s=`) instead
 * of the installation's `DKIM_*` key; a message of a kind that is `held` when its domain fails
 * (campaign mail) whose domain's check failed goes to `hold` and waits in the queue, nothing lost.
 * Everything else goes as it is.
 */
export async function applyDomainKeys<T extends { row: { user_id: number }; message: MailMessage }>(
  db: Db,
  appSecret: string,
  items: T[],
  holdable: (item: T) => boolean,
): Promise<{ send: T[]; hold: T[] }> {
  const domains = items.map((i) => fromDomain(i.message.from));
  const names = [...new Set(domains.filter((d): d is string => d !== null))];
  const users = [...new Set(items.map((i) => i.row.user_id))];
  if (names.length === 0) return { send: items, hold: [] };
  const rows = await db
    .selectFrom('sending_domains')
    .select(['user_id', 'domain', 'dkim_selector', 'private_key', 'status'])
    .where('user_id', 'in', users)
    .where('domain', 'in', names)
    .where('status', 'in', ['verified', 'failed'])
    .execute();
  // Each verified domain's key opened once per batch, not once per message.
  const byKey = new Map(
    rows.map((r) => [
      `${r.user_id} ${r.domain}`,
      { ...r, privateKey: r.status === 'verified' ? unseal(appSecret, DKIM_KEY, r.private_key) : null },
    ]),
  );
  const send: T[] = [];
  const hold: T[] = [];
  items.forEach((item, i) => {
    const row = domains[i] === null ? undefined : byKey.get(`${item.row.user_id} ${domains[i]}`);
    if (row?.status === 'failed' && holdable(item)) return void hold.push(item);
    const privateKey = row?.privateKey ?? null;
    send.push(
      privateKey
        ? { ...item, message: { ...item.message, dkim: { domainName: row!.domain, keySelector: row!.dkim_selector, privateKey } } }
        : item,
    );
  });
  return { send, hold };
}
