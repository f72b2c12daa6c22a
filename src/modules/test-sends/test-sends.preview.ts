/**
 * A single send's mail as one contact would get it (`GET /single-send/preview`): the design the
 * send keeps, with the contact's data in its placeholders, rendered by the same renderer as the
 * real mail but with nothing that counts or unsubscribes (no open pixel, no click slots, the
 * unsubscribe link `#`).
 */
import type { Db } from '../../db/index.js';
import type { AppDeps } from '../../deps.js';
import { compiledOnce } from '../../delivery/campaign-mail.js';
import { recipientValues } from '../../delivery/placeholders.js';
import { loadContacts, recipientOf } from '../../delivery/recipients.js';
import { DesignError, renderFor, type CompiledDesign } from '../../delivery/render.js';
import { NotFound, Rnf, ValidationError, type FieldErrors } from '../../http/errors.js';
import { Rules } from '../../http/messages.js';
import type { Principal } from '../../http/principal.js';
import { utrOf } from '../../http/schemas.js';
import { designOf } from '../single-sends/message.js';
import { findSingleSend } from '../single-sends/single-sends.queries.js';
import type { SingleSendRow } from '../single-sends/single-sends.schema.js';
import type { VariantRow } from '../single-sends/ab-tests.schema.js';
import { fillContactFor, sendAudience, type FillContact } from './test-sends.contact.js';
import type { PreviewInput } from './test-sends.schema.js';

/**
 * The send's design as a person looks at it (a preview, the send check): footer added, no open
 * pixel, links as written. Compiled once per version of the send. With `variant`: that variant of
 * its A/B test (its subject, and its own design; the send's when it has none).
 */
export function viewDesign(db: Db, send: SingleSendRow, variant: VariantRow | null = null): Promise<CompiledDesign> {
  const name = variant ? `${send.id}:${variant.variant}` : `${send.id}`;
  return compiledOnce(db, `view:single_send:${name}:${send.updated_at}`, () => ({
    design: designOf(send, variant),
    subject: variant?.subject ?? send.subject,
    preheader: send.preheader,
    footer: true,
    openPixel: false,
    trackClicks: false,
  }));
}

export interface Preview {
  subject: string;
  preheader: string;
  html: string;
  text: string;
  contact: FillContact | null;
}

/** The account's live send named by `rawUtr`, or `Record not found`. */
export async function requireSend(deps: AppDeps, userId: number, rawUtr: unknown): Promise<SingleSendRow> {
  const utr = utrOf(rawUtr);
  const send = utr ? await findSingleSend(deps.database.db, userId, utr) : undefined;
  if (!send) throw new NotFound(Rnf);
  return send;
}

/** `GET /single-send/preview`: the send's mail filled with `contact_id`'s data, or its first recipient's. */
export async function previewSingleSend(
  deps: AppDeps,
  principal: Principal,
  input: PreviewInput,
  schemaFailures: FieldErrors,
): Promise<Preview> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  if (rules.failed('utr')) rules.done();
  const send = await requireSend(deps, principal.account, input.utr);
  const contact = await fillContactFor(db, principal, input.contact_id, rules, async () => sendAudience(send));
  rules.done();
  let compiled: CompiledDesign;
  try {
    compiled = await viewDesign(db, send);
  } catch (err) {
    // A stored design that no longer compiles is the send's to fix, not a fault of the service.
    if (err instanceof DesignError) throw new ValidationError({ template_id: [err.message] });
    throw err;
  }
  const row = contact ? (await loadContacts(db, [contact.id])).get(contact.id) : undefined;
  const values = { ...recipientValues(recipientOf({ email: '', payload: null }, row)), unsubscribe_preferences: '#' };
  const rendered = renderFor(compiled, values, { sender_name: send.sender_name ?? '', sender_address: send.sender_address ?? '' });
  return { ...rendered, preheader: send.preheader, contact: contact ?? null };
}
