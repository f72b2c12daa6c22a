import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { WebhookEndpointTable } from '../../db/types.js';
import { EVENT_TYPES } from '../../events/outbox.js';
import { Secret } from '../../http/secret-fields.js';
import { Enum, Id, Int, ListMessage, Nullable, Paging, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';
import { MASK, maskedUrl } from '../../events/webhooks.address.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointTable>;

/** What stands for a credential in a URL the API shows. */

/** An event name an endpoint can take, or `*` for every one. */
const EventName = Enum(['*', ...EVENT_TYPES]);
const Events = Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length + 1 });
const Url = Type.String({ maxLength: 2048, description: 'An `http` or `https` URL whose host resolves to public addresses only.' });
const SigningSecret = Secret(Type.String({ description: 'The signing secret: `whsec_` and the base64 of its key (Standard Webhooks).' }));

export const CreateEndpointBody = Type.Object({ url: Url, events: Events, description: Type.Optional(Text(255)) });
export type CreateEndpointInput = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object({
  id: Id,
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Text(255)),
  enabled: Type.Optional(
    Int({ minimum: 0, maximum: 1, description: '0 disables the endpoint; 1 enables it and clears its failing state.' }),
  ),
});
export type UpdateEndpointInput = Static<typeof UpdateEndpointBody>;

export const EndpointIdBody = Type.Object({ id: Id });
export const EndpointIdQuery = QueryIds('id');
export const ListEndpointsQuery = Type.Object(Paging);
export const ListDeliveriesQuery = Type.Object({ ...QueryIds('endpoint_id').properties, ...Paging });
export const RetryDeliveryBody = Type.Object({
  endpoint_id: Id,
  event_id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "The event's `webhook-id` (`evt_…`), as the deliveries log shows it.",
  }),
});

/** What `toEndpoint` returns: an endpoint without its secret. */
export const EndpointShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    url: Type.String({
      description:
        `The URL as saved, its credentials masked with \`${MASK}\`: the user and password (\`https://${MASK}:${MASK}@host/…\`) and the ` +
        'values of query parameters named like a secret (`token`, `key`, `secret`, `sig`, `password`, `auth`, `code`…). ' +
        'Deliveries go to the URL as saved; sending this URL back to `/webhooks/endpoints/update` keeps it as saved.',
    }),
    events: Type.Array(Type.String(), { description: 'The event names it takes, or `["*"]` for all.' }),
    description: Type.String(),
    enabled: Type.Integer({ minimum: 0, maximum: 1 }),
    failing_since: Nullable(
      Type.String({ description: 'Since when every attempt to it has failed (UTC, microseconds); null while it answers.' }),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'A receiver of outgoing webhooks. Its secret is shown only on create and on rotation.' },
);

export const EndpointList = Success(ListMessage('endpoints', EndpointShape), {
  description: "The account's webhook endpoints, newest first.",
});
export const EndpointCreated = Success(
  Type.Object({ id: Type.Integer({ description: "The new endpoint's id." }), secret: SigningSecret }),
  {
    description: 'Created; the secret is shown here and on rotation only.',
  },
);
export const SecretRotated = Success(Type.Object({ secret: SigningSecret }), {
  description: 'The new secret; deliveries from now on are signed with it only.',
});

/** What `toAttempt` returns: one line of the deliveries log. */
export const AttemptShape = Type.Object(
  {
    event_id: Type.String({ description: 'The `webhook-id` of the event, the same on every attempt.' }),
    event_type: Type.String(),
    attempt: Type.Integer({ minimum: 1, description: 'Which attempt of this event to this endpoint.' }),
    status_code: Nullable(
      Type.Integer({ description: "The receiver's HTTP status; null on a network error, a timeout or a refused address." }),
    ),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null when it succeeded.' })),
    duration_ms: Type.Integer({ minimum: 0 }),
    created_at: Timestamp,
    next_attempt_at: Nullable(Type.String({ description: 'When the next attempt runs (UTC, microseconds); null when none will.' })),
  },
  { description: 'One attempt to deliver an event to an endpoint.' },
);
export const DeliveryList = Success(ListMessage('deliveries', AttemptShape), {
  description: "The endpoint's delivery attempts, newest first.",
});

/** The API shape of an endpoint: never its secret, its URL's credentials masked (`maskedUrl`). */
export function toEndpoint(row: WebhookEndpointRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    url: maskedUrl(row.url),
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A row of the deliveries log, joined with its event. */
export interface AttemptRow {
  id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
  next_attempt_at: string | null;
}

/** The API shape of one attempt. */
export function toAttempt(row: AttemptRow) {
  return {
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    created_at: row.created_at,
    next_attempt_at: row.next_attempt_at,
  };
}
