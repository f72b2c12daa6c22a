import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { domainToASCII } from 'node:url';
import type { AppDeps } from '../../deps.js';
import { NotFound, Rnf, type FieldErrors } from '../../http/errors.js';
import { queryListSource } from '../../http/list-source.js';
import { messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { DKIM_KEY, seal } from '../../util/seal.js';
import { isoMicros } from '../../util/time.js';
import { enqueueEvent } from '../notifications/notifications.events.js';
import { runChecks } from './sending-domains.checks.js';
import { statusAfter } from './sending-domains.checks.js';
import { systemDns, type Dns } from './sending-domains.dns.js';
import { deleteDomainRow, findDomain, findDomainByName, insertDomain, saveCheck, selectDomains } from './sending-domains.queries.js';
import { toSendingDomain, type CreateDomainInput, type SendingDomainRow } from './sending-domains.schema.js';

const generateRsa = promisify(generateKeyPair);

export const INVALID_DOMAIN = 'The domain must be a valid domain.';
export const DOMAIN_FAILS = "The sender's domain fails authentication.";

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A DNS name as kept: its A-label (an internationalised name through IDNA), lower case, without a
 * trailing dot; null when it is no host name of at least two labels (at most 253 characters, each
 * label 1 to 63 letters, digits or inner hyphens, a top-level label not all digits).
 */
export function normalizeDomain(raw: string): string | null {
  const name = raw.trim().replace(/\.$/, '');
  if (name === '' || name.length > 1000 || /[\s/@:]/.test(name)) return null;
  const ascii = domainToASCII(name);
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

/** The DNS the checks ask: DNS_SERVERS, or the system's. */
export const dnsOf = (deps: Pick<AppDeps, 'config'>): Dns => systemDns(deps.config.dnsServers);

/** The list source of the account's sending domains. */
export function listDomains(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectDomains(deps.database.db, userId),
    'id',
    (rows: SendingDomainRow[]) => rows.map((r) => toSendingDomain(deps.config, r)),
  );
}

async function requireDomain(deps: AppDeps, userId: number, rawId: unknown): Promise<SendingDomainRow> {
  const id = toId(rawId);
  const row = id ? await findDomain(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(Rnf);
  return row;
}

/** One sending domain (details); reading never checks. */
export async function getDomain(deps: AppDeps, userId: number, rawId: unknown) {
  return toSendingDomain(deps.config, await requireDomain(deps, userId, rawId));
}

/** Adds a domain with a new 2048-bit RSA key (the private half sealed); it is `pending` until checked. */
export async function createDomain(deps: AppDeps, userId: number, input: CreateDomainInput, schemaFailures: FieldErrors) {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  const domain = rules.failed('domain') ? null : normalizeDomain(input.domain);
  if (!rules.failed('domain') && domain === null) rules.add('domain', INVALID_DOMAIN);
  await rules.check('domain', domain, async (d) => ((await findDomainByName(db, userId, d)) ? messages.unique('domain') : null));
  rules.done();
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const id = await uniqueOr('domain', () =>
    insertDomain(db, {
      user_id: userId,
      domain: domain!,
      dkim_selector: (input.dkim_selector ?? 'campaign').toLowerCase(),
      public_key: Buffer.from(publicKey).toString('base64'),
      private_key: seal(deps.config.appSecret, DKIM_KEY, privateKey),
      status: 'pending',
      checks: null,
      last_checked_at: null,
      created_at: isoMicros(deps.clock.now()),
    }),
  );
  return getDomain(deps, userId, id);
}

/** Deletes a sending domain (its key with it): its mail is signed with the installation's key again. */
export async function deleteDomain(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await deleteDomainRow(deps.database.db, userId, id))) throw new NotFound(Rnf);
}

/**
 * Checks a domain against DNS and keeps the outcome. A change from verified to failed tells the
 * account (`sending_domain.failed`: webhook event and a mail to the notification recipients);
 * from failed to verified, `sending_domain.verified`. Of two checks racing on one domain, one
 * writes (and tells). Returns the row as it is afterwards.
 */
export async function checkDomainRow(deps: AppDeps, row: SendingDomainRow, dns: Dns = dnsOf(deps)): Promise<SendingDomainRow> {
  const { db } = deps.database;
  const runs = await runChecks(dns, deps.config, row);
  const status = statusAfter(runs, row.status);
  const checks = runs.map(({ name, status, message }) => ({ name, status, message }));
  const values = { status, checks: JSON.stringify(checks), last_checked_at: isoMicros(deps.clock.now()) };
  const saved = await db.transaction().execute(async (trx) => {
    if (!(await saveCheck(trx, row.id, row.last_checked_at, values))) return false;
    const event =
      row.status === 'verified' && status === 'failed'
        ? 'sending_domain.failed'
        : row.status === 'failed' && status === 'verified'
          ? 'sending_domain.verified'
          : null;
    if (event) await enqueueEvent(trx, deps, row.user_id, event, { id: row.id, domain: row.domain, checks });
    return true;
  });
  return saved ? { ...row, ...values } : ((await findDomain(db, row.user_id, row.id)) ?? { ...row, ...values });
}

/** `POST /sending-domains/check`: checks now and answers the domain. */
export async function checkDomain(deps: AppDeps, userId: number, rawId: unknown) {
  const row = await requireDomain(deps, userId, rawId);
  return toSendingDomain(deps.config, await checkDomainRow(deps, row));
}
