import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { wakeWebhookWorkers } from '../../events/outbox.js';
import { queryListSource } from '../../http/list-source.js';
import { Conflict, NotFound, Rnf, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { seal, WEBHOOK_SECRET } from '../../util/seal.js';
import { hostOf, isPublicAddress, maskedUrl, PRIVATE_ADDRESS, resolveHost, UNRESOLVED_HOST } from '../../events/webhooks.address.js';
import {
  deleteEndpointRow,
  failPendingDeliveries,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  makeDeliveryDue,
  selectAttempts,
  selectEndpoints,
  updateEndpointRow,
  type EndpointChanges,
} from './webhooks.queries.js';
import {
  toAttempt,
  toEndpoint,
  type AttemptRow,
  type CreateEndpointInput,
  type UpdateEndpointInput,
  type WebhookEndpointRow,
} from './webhooks.schema.js';

/** A fresh signing secret in the Standard Webhooks format: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * A fresh signing secret, as shown (once) and as kept: sealed with the app secret, so a copy of
 * the database signs nothing without it. The webhook lane opens it to sign.
 */
function madeSecret(deps: AppDeps): { shown: string; kept: string } {
  const shown = newSecret();
  return { shown, kept: seal(deps.config.appSecret, WEBHOOK_SECRET, shown) };
}

/**
 * The rules of an endpoint's URL: http or https, a host that resolves, and (unless
 * `WEBHOOKS_ALLOW_PRIVATE` is set) to public addresses only. Delivery checks the address again
 * at each connection.
 */
async function checkUrl(rules: Rules, url: string | undefined, allowPrivate: boolean): Promise<void> {
  await rules.check('url', url, async (text) => {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return messages.format('url');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'The url must start with http:// or https://.';
    const addresses = await resolveHost(hostOf(parsed));
    if (!addresses) return UNRESOLVED_HOST;
    return allowPrivate || addresses.every(isPublicAddress) ? null : PRIVATE_ADDRESS;
  });
}

/** The event list as stored: the names once each, `["*"]` when `*` is among them. */
const eventsText = (events: string[]) => JSON.stringify(events.includes('*') ? ['*'] : [...new Set(events)]);

/** The list source of the account's endpoints. */
export function listEndpoints(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectEndpoints(deps.database.db, userId),
    'id',
    (rows: WebhookEndpointRow[]) => rows.map(toEndpoint),
  );
}

/** Creates an enabled endpoint; returns its id and its secret (shown this once). */
export async function createEndpoint(
  deps: AppDeps,
  userId: number,
  input: CreateEndpointInput,
  schemaFailures: FieldErrors,
): Promise<{ id: number; secret: string }> {
  const rules = new Rules(schemaFailures);
  await checkUrl(rules, input.url, deps.config.webhooksAllowPrivate);
  rules.done();
  const secret = madeSecret(deps);
  const values = {
    user_id: userId,
    url: input.url,
    events: eventsText(input.events),
    description: input.description ?? '',
    secret: secret.kept,
  };
  const id = await insertEndpoint(deps.database.db, values, deps.clock.now());
  return { id, secret: secret.shown };
}

async function requireEndpoint(deps: AppDeps, userId: number, rawId: unknown): Promise<WebhookEndpointRow> {
  const id = toId(rawId);
  const row = id ? await findEndpoint(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(Rnf);
  return row;
}

/**
 * Changes the given fields of an endpoint. Enabling it clears its failing state; disabling it
 * gives up its pending deliveries (`failed`), in the same transaction.
 */
export async function updateEndpoint(
  deps: AppDeps,
  userId: number,
  input: UpdateEndpointInput,
  schemaFailures: FieldErrors,
): Promise<void> {
  const rules = new Rules(schemaFailures);
  const row = rules.failed('id') ? undefined : await findEndpoint(deps.database.db, userId, input.id);
  if (!row && !rules.failed('id')) throw new NotFound(Rnf);
  // The URL as the API shows it (credentials masked), sent back by an edit form: the saved one stays.
  const url = row && input.url === maskedUrl(row.url) ? undefined : input.url;
  await checkUrl(rules, url, deps.config.webhooksAllowPrivate);
  rules.done();
  const changes: EndpointChanges = {};
  if (url !== undefined) changes.url = url;
  if (input.events !== undefined) changes.events = eventsText(input.events);
  if (input.description !== undefined) changes.description = input.description;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.enabled === 1) changes.failing_since = null;
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    if (!(await updateEndpointRow(trx, userId, input.id, changes, now))) throw new NotFound(Rnf);
    if (input.enabled === 0) await failPendingDeliveries(trx, [input.id], now);
  });
}

/** Deletes an endpoint with its deliveries and their log. */
export async function deleteEndpoint(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await deleteEndpointRow(deps.database.db, userId, id))) throw new NotFound(Rnf);
}

/** Gives an endpoint a new secret and returns it; the old one signs nothing from now on. */
export async function rotateSecret(deps: AppDeps, userId: number, id: number): Promise<string> {
  const secret = madeSecret(deps);
  if (!(await updateEndpointRow(deps.database.db, userId, id, { secret: secret.kept }, deps.clock.now()))) throw new NotFound(Rnf);
  return secret.shown;
}

/** The list source of an endpoint's deliveries log. */
export async function listDeliveries(deps: AppDeps, userId: number, rawEndpointId: unknown) {
  const endpoint = await requireEndpoint(deps, userId, rawEndpointId);
  return queryListSource(
    () => selectAttempts(deps.database.db, userId, endpoint.id),
    'a.id',
    (rows: AttemptRow[]) => rows.map(toAttempt),
  );
}

/**
 * Sends an event to an endpoint again now: its delivery becomes due at once, whatever its state
 * (one being sent at this moment is left to finish). If the attempt fails, the delivery goes on
 * with the retry schedule from where it stood.
 */
export async function retryDelivery(deps: AppDeps, userId: number, endpointId: number, eventId: string): Promise<void> {
  const { db } = deps.database;
  const endpoint = await findEndpoint(db, userId, endpointId);
  const delivery = endpoint ? await findDelivery(db, userId, endpointId, eventId) : undefined;
  if (!endpoint || !delivery) throw new NotFound(Rnf);
  if (!endpoint.enabled) throw new Conflict('The endpoint is disabled: enable it first.');
  await db.transaction().execute(async (trx) => {
    await makeDeliveryDue(trx, delivery.id, deps.clock.now());
    await wakeWebhookWorkers(trx);
  });
}
