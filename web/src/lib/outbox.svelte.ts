/**
 * Where the account's mail goes (`GET /outbox`, scope `settings.write`): without `SMTP_URL` the
 * service writes each mail to a file in its outbox folder and it reaches nobody. Read once per
 * sign-in for the banner that says so, and again on the Outbox page, which lists the newest mails.
 */
import { api, type Message } from './api';

/** The answer of `GET /outbox`. */
export type OutboxAnswer = Message<'/outbox'>;

/** A mail written to the outbox folder, its links decoded. */
export type OutboxMail = OutboxAnswer['mails'][number];

/** The console's Outbox page (below /app). */
export const OUTBOX_PAGE = '/settings/outbox';

/** How many of the newest mails the console shows. */
const LIMIT = 20;

/** The last answer (null until read, and for a person who may not read it). */
export const outbox = $state<{ answer: OutboxAnswer | null }>({ answer: null });

/** The person the answer was read for: another person (or a new sign-in) reads it anew. */
let readFor: number | null = null;

/** Reads the mode and the newest mails; throws the API's refusal. An answer for a person no longer signed in is dropped. */
export async function loadOutbox(): Promise<OutboxAnswer> {
  const asked = readFor;
  const answer = await api.get('/outbox', { limit: LIMIT });
  if (readFor === asked) outbox.answer = answer;
  return answer;
}

/**
 * Reads the answer once for `personId`, the signed-in person when they may read it (null: nobody,
 * and the answer is forgotten). A failure leaves it unread: the banner is a hint, not a page.
 */
export function readOutboxFor(personId: number | null): void {
  if (personId === readFor) return;
  readFor = personId;
  outbox.answer = null;
  if (personId !== null) loadOutbox().catch(() => {});
}
