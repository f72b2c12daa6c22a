/**
 * Which message each event of a batch names: its VERP token when genuine, else our `Message-ID`.
 * The whole batch is looked up with at most two queries (rows by id, then rows by Message-ID for
 * the events no VERP token named), not two per event.
 */
import type { AppDeps } from '../deps.js';
import { trackingLinks } from '../delivery/tracking.js';
import { bareMessageId } from '../util/email.js';

/** What of an event names its message: a VERP address or token, and the original Message-ID. */
export interface MessageNaming {
  verp?: string | null;
  messageId?: string | null;
}

/** The message an event names, as matching needs it. */
export interface NamedMessage {
  id: number;
  user_id: number;
  email: string;
}

interface MessageRow {
  id: number | string;
  user_id: number;
  email: string;
  message_id: string | null;
}

/** What one event names before the lookup: the row id of its VERP token, its bare Message-ID, the row id that Message-ID ends with. */
interface Names {
  verpId: number | null;
  bare: string | null;
  embeddedId: number | null;
}

/** Ours end in `.<row id>@<host>`: a copy whose case was changed on the way still names its row. */
const EMBEDDED_ID = /\.(\d{1,15})@[^@]+$/;

function namesOf(event: MessageNaming, links: ReturnType<typeof trackingLinks>): Names {
  const verpId = event.verp ? (links.readVerpAddress(event.verp) ?? links.readVerpToken(event.verp.trim())) : null;
  const bare = event.messageId ? bareMessageId(event.messageId) : null;
  const usable = bare && bare.length <= 998 ? bare : null;
  const embedded = usable ? EMBEDDED_ID.exec(usable) : null;
  return { verpId, bare: usable, embeddedId: embedded ? Number(embedded[1]) : null };
}

const named = (row: MessageRow): NamedMessage => ({ id: Number(row.id), user_id: row.user_id, email: row.email });

/**
 * The message each event names (undefined when it names none of this installation's): the VERP
 * token (an address `local+token@domain` or the token alone) when it is genuine, else our
 * `Message-ID` (stored without angle brackets; compared with or without them, and
 * case-insensitively through the row id it carries when a relay changed its case).
 */
export async function findNamedMessages(deps: AppDeps, events: readonly MessageNaming[]): Promise<Array<NamedMessage | undefined>> {
  const { db } = deps.database;
  const links = trackingLinks(deps.config);
  const names = events.map((e) => namesOf(e, links));
  const ids = [...new Set(names.flatMap((n) => [n.verpId, n.embeddedId]).filter((id): id is number => id !== null && id > 0))];
  const select = db.selectFrom('mail_messages').select(['id', 'user_id', 'email', 'message_id']);
  const byId = new Map<number, MessageRow>();
  if (ids.length > 0) for (const row of await select.where('id', 'in', ids).execute()) byId.set(Number(row.id), row);
  // Only the events their VERP token did not name are looked up by Message-ID.
  const unnamed = names.filter((n) => n.verpId === null || !byId.has(n.verpId));
  const bares = [...new Set(unnamed.flatMap((n) => (n.bare ? [n.bare, `<${n.bare}>`] : [])))];
  const byMessageId = new Map<string, MessageRow>();
  if (bares.length > 0) {
    // The lowest id first: the oldest row of a Message-ID stored twice wins, as one lookup would.
    for (const row of await select.where('message_id', 'in', bares).orderBy('id').execute()) {
      const key = bareMessageId(row.message_id);
      if (key && !byMessageId.has(key)) byMessageId.set(key, row);
    }
  }
  return names.map(({ verpId, bare, embeddedId }) => {
    const byVerp = verpId !== null ? byId.get(verpId) : undefined;
    if (byVerp) return named(byVerp);
    if (!bare) return undefined;
    const exact = byMessageId.get(bare);
    if (exact) return named(exact);
    const candidate = embeddedId !== null ? byId.get(embeddedId) : undefined;
    return candidate?.message_id && bareMessageId(candidate.message_id)?.toLowerCase() === bare.toLowerCase()
      ? named(candidate)
      : undefined;
  });
}
