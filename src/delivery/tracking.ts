import { createHmac } from 'node:crypto';
import type { Config } from '../config.js';
import { createTokens } from '../util/tokens.js';

/** Token purposes: an open token cannot unsubscribe, and the other way round. */
const OPEN = 'open';
const UNSUBSCRIBE = 'unsubscribe';

/** What a tracking or unsubscribe token names: one queued message (`mail_messages.id`). */
interface Payload {
  m: number;
}

/** The host of PUBLIC_URL: the right-hand side of our Message-IDs. */
function messageIdHost(publicUrl: string): string {
  try {
    return new URL(publicUrl).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
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
  const host = messageIdHost(config.publicUrl);
  return {
    /**
     * The message's `Message-ID`: the same every time the row is rendered (a message sent again
     * after a crash carries the same id, so receiving systems can drop the copy), unique per row
     * and installation (an HMAC of the row id with APP_SECRET), and telling nothing.
     */
    messageId: (messageId: number) =>
      `${createHmac('sha256', config.appSecret).update(`message-id:${messageId}`).digest('base64url').slice(0, 24)}.${messageId}@${host}`,
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
