import type { Config } from '../config.js';
import { createTokens } from '../util/tokens.js';

/** Token purposes: an open token cannot unsubscribe, and the other way round. */
const OPEN = 'open';
const UNSUBSCRIBE = 'unsubscribe';

/** What a tracking or unsubscribe token names: one queued message (`mail_messages.id`). */
interface Payload {
  m: number;
}

/**
 * The public links of one message, signed with `APP_SECRET` so they can be neither guessed nor
 * altered: the open pixel (`/t/open/<token>.gif`) and the preferences / one-click unsubscribe page
 * (`/u/<token>`). Both carry only the message id; everything else is read from its row.
 */
export function trackingLinks(config: Pick<Config, 'appSecret' | 'publicUrl'>) {
  const tokens = createTokens(config.appSecret);
  const read = (purpose: string, token: unknown): number | null => {
    const p = tokens.verify<Payload>(purpose, token);
    return p && Number.isSafeInteger(p.m) && p.m > 0 ? p.m : null;
  };
  return {
    openToken: (messageId: number) => tokens.sign(OPEN, { m: messageId } satisfies Payload),
    unsubscribeToken: (messageId: number) => tokens.sign(UNSUBSCRIBE, { m: messageId } satisfies Payload),
    openUrl(messageId: number): string {
      return `${config.publicUrl}/t/open/${this.openToken(messageId)}.gif`;
    },
    unsubscribeUrl(messageId: number): string {
      return `${config.publicUrl}/u/${this.unsubscribeToken(messageId)}`;
    },
    /** The message id of a genuine open token; null for a forged or altered one. */
    readOpenToken: (token: unknown) => read(OPEN, token),
    /** The message id of a genuine unsubscribe token; null for a forged or altered one. */
    readUnsubscribeToken: (token: unknown) => read(UNSUBSCRIBE, token),
  };
}
