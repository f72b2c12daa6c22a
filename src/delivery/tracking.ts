import { createHmac, timingSafeEqual } from 'node:crypto';
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

/** Base64url characters of the click token's MAC: 96 bits (16 characters, no spare bits). */
const CLICK_MAC_CHARS = 16;
/**
 * A click token: message id and link id in base 36 (no leading zero), then the MAC. Link `0` is
 * the message's trap link, which no person sees (docs/engagement.md).
 */
const CLICK_TOKEN = /^([1-9a-z][0-9a-z]{0,10})\.(0|[1-9a-z][0-9a-z]{0,10})\.([A-Za-z0-9_-]{16})$/;

/** A click: the message clicked in, and the tracked link (`tracked_links.id`; 0: the message's trap link). */
export interface ClickRef {
  messageId: number;
  linkId: number;
}

/** The link id of a message's trap link in its click token. */
export const TRAP_LINK_ID = 0;

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
 * altered: the open pixel (`/t/open/<token>.gif`), the preferences / one-click unsubscribe page
 * (`/u/<token>`) and the click redirects (`/t/click/<token>`). They carry only ids (the message,
 * and the link for a click); everything else is read from their rows.
 */
export function trackingLinks(config: Pick<Config, 'appSecret' | 'publicUrl'> & Partial<Pick<Config, 'bounceAddress'>>) {
  const tokens = createTokens(config.appSecret);
  const verpMac = (id: string) => createHmac('sha256', config.appSecret).update(`verp:${id}`).digest('hex').slice(0, VERP_MAC_CHARS);
  const read = (purpose: string, token: unknown): number | null => {
    const p = tokens.verify<Payload>(purpose, token);
    return p && Number.isSafeInteger(p.m) && p.m > 0 ? p.m : null;
  };
  const host = messageIdHost(config.publicUrl);
  const clickMac = (body: string) =>
    createHmac('sha256', config.appSecret).update(`click\0${body}`).digest('base64url').slice(0, CLICK_MAC_CHARS);
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
    /**
     * The click token of a link in a message: `<message id>.<link id>.<MAC>` (ids in base 36, the
     * MAC 96 bits of HMAC-SHA256 with APP_SECRET in base64url), about 25 characters, so a message
     * with many links stays small. It names the link by id only: the URL is read from its row.
     */
    clickToken(messageId: number, linkId: number): string {
      const body = `${messageId.toString(36)}.${linkId.toString(36)}`;
      return `${body}.${clickMac(body)}`;
    },
    clickUrl(messageId: number, linkId: number): string {
      return `${config.publicUrl}/t/click/${this.clickToken(messageId, linkId)}`;
    },
    /**
     * The message's trap link: a click URL no person sees or can follow (the mail hides it), so
     * whatever requests it is a scanner following every link. It redirects to `trapTarget`.
     */
    trapUrl(messageId: number): string {
      return this.clickUrl(messageId, TRAP_LINK_ID);
    },
    /** Where the trap link redirects: the service's public address, a harmless page for any gateway that checks it. */
    trapTarget: config.publicUrl,
    /** The message and link of a genuine click token (exact spelling only); null for anything else. */
    readClickToken(token: unknown): ClickRef | null {
      if (typeof token !== 'string' || token.length > 64) return null;
      const m = CLICK_TOKEN.exec(token);
      if (!m) return null;
      const expected = Buffer.from(clickMac(`${m[1]}.${m[2]}`));
      const given = Buffer.from(m[3]);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      const messageId = parseInt(m[1], 36);
      const linkId = parseInt(m[2], 36);
      return Number.isSafeInteger(messageId) && Number.isSafeInteger(linkId) ? { messageId, linkId } : null;
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
