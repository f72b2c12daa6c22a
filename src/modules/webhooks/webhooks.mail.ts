import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { escapeHtml } from '../../delivery/placeholders.js';
import type { MailMessage } from '../../delivery/transport.js';
import { systemFrom } from '../../delivery/transports.js';
import { enqueueSystemMail } from '../notifications/notifications.mail.js';
import { selectNotificationRecipients } from '../notifications/notifications.queries.js';
import { failPendingDeliveries } from './webhooks.queries.js';
import type { DisabledEndpoint } from '../../jobs/webhook.queue.js';
import { maskedUrl } from '../../events/webhooks.address.js';

/** The note to one notification recipient that an endpoint was disabled. */
export function endpointDisabledMail(
  config: AppDeps['config'],
  recipient: { email_address: string; email_owner: string },
  endpoint: DisabledEndpoint,
): MailMessage {
  const sentence =
    `The webhook endpoint ${maskedUrl(endpoint.url)} (id ${endpoint.id}) has failed every delivery since ${endpoint.failing_since} ` +
    'and has been disabled. Enable it again (POST /webhooks/endpoints/update with enabled=1) once it answers.';
  return {
    from: systemFrom(config),
    to: recipient.email_address,
    subject: '[Campaign API] Webhook endpoint disabled',
    text: `Hello ${recipient.email_owner},\n\n${sentence}\n`,
    html: `<p>Hello ${escapeHtml(recipient.email_owner)},</p><p>${escapeHtml(sentence)}</p>`,
    headers: { 'X-Campaign-Event': 'webhook.endpoint_disabled', 'Auto-Submitted': 'auto-generated' },
  };
}

/**
 * What disabling endpoints entails, in the transaction that disables them: their unfinished
 * deliveries are failed, and each notification recipient of the account gets a note.
 */
export async function endpointsDisabled(trx: Db, deps: Pick<AppDeps, 'config'>, now: Date, endpoints: DisabledEndpoint[]): Promise<void> {
  await failPendingDeliveries(
    trx,
    endpoints.map((e) => e.id),
    now,
  );
  for (const endpoint of endpoints) {
    const recipients = await selectNotificationRecipients(trx, endpoint.user_id).orderBy('id').execute();
    for (const r of recipients) await enqueueSystemMail(trx, endpoint.user_id, endpointDisabledMail(deps.config, r, endpoint), now);
  }
}
