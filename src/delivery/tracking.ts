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

/** Hex digits of the VERP token's MAC: 64 bits, and the local part stays short and lower-case. */
const VERP_MAC_CHARS = 16;

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
export function trackingLinks(config: Pick<Config, 'appSecret' | 'publicUrl'> & Partial<Pick<Config, 'bounceAddress'>>) {
  const tokens = createTokens(config.appSecret);
  const verpMac = (id: string) => createHmac('sha256', config.appSecret).update(`verp:${id}`).digest('hex').slice(0, VERP_MAC_CHARS);
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
    /**
     * The VERP token of a message: its row id in base 36, a dash, and 64 bits of HMAC, all
     * lower-case (some servers lower-case local parts), short enough for a 64-character local part.
     */
    verpToken(messageId: number): string {
      const id = messageId.toString(36);
      return `${id}-${verpMac(id)}`;
    },
    /** The message id of a genuine VERP token (any case); null for anything else. */
    readVerpToken(token: unknown): number | null {
      if (typeof token !== 'string') return null;
      const m = /^([0-9a-z]{1,12})-([0-9a-f]{16})$/.exec(token.toLowerCase());
      if (!m || verpMac(m[1]) !== m[2]) return null;
      const id = parseInt(m[1], 36);
      return Number.isSafeInteger(id) && id > 0 ? id : null;
    },
    /**
     * The envelope sender (Return-Path) of a message with BOUNCE_ADDRESS set:
     * `bounces+<token>@domain` for `bounces@domain`; null when it is not set.
     */
    verpAddress(messageId: number): string | null {
      if (!config.bounceAddress) return null;
      const at = config.bounceAddress.lastIndexOf('@');
      return `${config.bounceAddress.slice(0, at)}+${this.verpToken(messageId)}${config.bounceAddress.slice(at)}`;
    },
    /** The message id named by a VERP address (`local+token@domain`, any case); null if it names none. */
    readVerpAddress(address: unknown): number | null {
      if (typeof address !== 'string') return null;
      const local = address.trim().replace(/^<|>$/g, '').split('@')[0] ?? '';
      const plus = local.lastIndexOf('+');
      return plus < 0 ? null : this.readVerpToken(local.slice(plus + 1));
    },
  };
}
