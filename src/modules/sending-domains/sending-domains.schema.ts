import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import { domainToUnicode } from 'node:url';
import type { Config } from '../../config.js';
import type { SendingDomainTable } from '../../db/types.js';
import { Enum, Id, ListMessage, Nullable, Paging, QueryIds, Success, Timestamp } from '../../http/schemas.js';
import { CHECK_NAMES, recordsFor, type Check } from './sending-domains.checks.js';

export type SendingDomainRow = Selectable<SendingDomainTable>;

export const SENDING_DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;

export const CreateDomainBody = Type.Object({
  domain: Type.String({
    maxLength: 1000,
    description: 'A DNS name (`mail.example.com`); an internationalised name is kept as its A-label (`xn--…`).',
  }),
  dkim_selector: Type.Optional(
    Type.String({
      maxLength: 63,
      pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$',
      description: 'The DKIM selector (one DNS label); default `campaign`.',
    }),
  ),
});
export type CreateDomainInput = Static<typeof CreateDomainBody>;
export const DomainIdBody = Type.Object({ id: Id });
export const DomainIdQuery = QueryIds('id');
export const ListDomainsQuery = Type.Object(Paging);

const Record_ = Type.Object({
  type: Type.Literal('TXT'),
  host: Type.String({ description: 'The full name to publish it at.' }),
  value: Type.String({ description: 'The record text, exactly.' }),
  purpose: Enum(['dkim', 'spf', 'dmarc'] as const),
});

const CheckShape = Type.Object({
  name: Enum(CHECK_NAMES),
  status: Enum(['pass', 'warn', 'fail'] as const),
  message: Type.String({ description: 'What was found and what to publish.' }),
});

export const DomainShape = Type.Object(
  {
    id: Type.Integer(),
    domain: Type.String({ description: 'The domain as kept: its A-label, lower case.' }),
    display_domain: Type.String({ description: 'The domain to show: its U-label (Unicode) form.' }),
    dkim_selector: Type.String(),
    status: Enum(SENDING_DOMAIN_STATUSES),
    records: Type.Array(Record_, { description: 'The DNS records to publish: DKIM, SPF, DMARC.' }),
    checks: Type.Array(CheckShape, { description: 'The last check of each: dkim, spf, dmarc, alignment, mx; empty until the first.' }),
    last_checked_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  {
    description:
      'A domain mail is sent from, with its own DKIM key. `status`: `pending` until checked, then `verified` (DKIM, SPF and DMARC do not fail) or `failed`.',
  },
);

export const DomainList = Success(ListMessage('domains', DomainShape), { description: "The account's sending domains, newest first." });
export const DomainAnswer = Success(Type.Object({ domain: DomainShape }));

/** The checks as kept (JSON); anything unreadable reads as none. */
export function storedChecks(text: string | null): Check[] {
  try {
    const list = JSON.parse(text ?? '[]') as unknown;
    return Array.isArray(list) ? (list as Check[]) : [];
  } catch {
    return [];
  }
}

/** The API shape of a sending domain. */
export function toSendingDomain(config: Pick<Config, 'spfInclude' | 'dmarcRua'>, row: SendingDomainRow) {
  return {
    id: row.id,
    domain: row.domain,
    display_domain: domainToUnicode(row.domain) || row.domain,
    dkim_selector: row.dkim_selector,
    status: row.status as (typeof SENDING_DOMAIN_STATUSES)[number],
    records: recordsFor(config, row).map((r) => ({ ...r })),
    checks: storedChecks(row.checks).map(({ name, status, message }) => ({ name, status, message })),
    last_checked_at: row.last_checked_at,
    created_at: row.created_at,
  };
}
export type SendingDomain = ReturnType<typeof toSendingDomain>;
