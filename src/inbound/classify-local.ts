/**
 * PLACEHOLDER — replaced at merge by the classification table of `src/inbound/classify.ts`.
 *
 * The relay webhooks call `classifyAnswer` only where a provider gives an SMTP answer (an enhanced
 * status, a code, a text) and no hard/soft verdict of its own. This minimal local rule follows
 * contract §19: hard when the address or its domain does not exist or has moved, soft otherwise.
 */

/** Enhanced status codes that say the address or its domain is gone (contract §19). */
const HARD_STATUS = /\b5\.(1\.(1|2|6|10)|4\.4)\b/;

/** Texts that say the same without a usable status. */
const HARD_TEXT =
  /user unknown|unknown user|unknown recipient|recipient unknown|no such (user|mailbox|recipient|address)|mailbox (not found|unavailable|does not exist)|(recipient|address|user|account) (does not exist|not found|rejected: user unknown)|host (or domain )?not found|domain not found|no mx|invalid (recipient|mailbox|address)|has moved/i;

/** Hard or soft for a failure described by an SMTP answer text (which may include its codes). */
export function classifyAnswer(text: string): 'hard' | 'soft' {
  return HARD_STATUS.test(text) || HARD_TEXT.test(text) ? 'hard' : 'soft';
}
