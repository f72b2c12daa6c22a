/**
 * Copies of an erased address inside other data: the values of segment conditions, the bodies of
 * stored webhook events, and mail written to the outbox folder. The first two have the address
 * replaced by `erased:<keyed hash>`; outbox files naming it are deleted. See docs/privacy.md.
 */
import { opendir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountSegments } from '../../db/dialect.js';
import { erasureHash } from '../../suppression/suppression.writes.js';
import { isoMicros } from '../../util/time.js';
import { recomputeSegment } from '../segments/segments.membership.js';
import { isMessageOf, segmentsNaming, setSegmentValue, setWebhookEventBody, webhookEventsNaming } from './contacts.privacy.queries.js';

/** What an erasure step is given: the account, the address (lower case), and the app for the audience change. */
export interface ErasureTarget {
  deps: AppDeps;
  userId: number;
  key: string;
  now: Date;
}

/** One table's part of an erasure, run in the erasure's transaction: returns how many of the account's rows held the address. */
export type ErasureStep = (trx: Db, target: ErasureTarget) => Promise<number>;

/** The characters of an address's local part: one of them just before a match means a longer address. */
const LOCAL_CHAR = "[\\w.!#$%&'*+/=?^`{|}~-]";

/**
 * The address (lower case) as a whole address in any letter case: not the tail of a longer local
 * part (`jim` + `bob@x.org`) nor the head of a longer domain (`bob@x.org` + `.uk`).
 */
function addressPattern(key: string, flags = 'i'): RegExp {
  const escaped = key.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  return new RegExp(`(?<!${LOCAL_CHAR})${escaped}(?![\\w-]|\\.[\\w-])`, flags);
}

/** `text` with every whole occurrence of the address (lower case `key`, matched in any case) replaced by `marker`. */
export function replaceAddress(text: string, key: string, marker: string): string {
  return text.replace(addressPattern(key, 'gi'), () => marker);
}

/** What the address becomes where it is replaced: `erased:` and its keyed hash, which matches no one. */
const markerOf = (appSecret: string, key: string) => `erased:${erasureHash(appSecret, key)}`;

/**
 * Replaces the address in the condition values of the account's segments (deleted ones too), and
 * recomputes the membership of each live segment changed: a condition `email is <address>` becomes
 * one that matches no one. Returns how many segments changed.
 */
export const eraseFromSegmentConditions: ErasureStep = async (trx, t) => {
  const marker = markerOf(t.deps.config.appSecret, t.key);
  const segments = await segmentsNaming(trx, t.userId, t.key);
  if (segments.length > 0) await lockAccountSegments(trx, t.userId);
  let changed = 0;
  for (const segment of segments) {
    let values: unknown;
    try {
      values = JSON.parse(segment.value);
    } catch {
      values = null;
    }
    // The values are a JSON array of strings; anything else is replaced as text.
    const value = Array.isArray(values)
      ? JSON.stringify(values.map((v) => (typeof v === 'string' ? replaceAddress(v, t.key, marker) : v)))
      : replaceAddress(segment.value, t.key, marker);
    if (value === segment.value) continue;
    await setSegmentValue(trx, segment.id, value, isoMicros(t.now));
    changed++;
    if (segment.deleted_at !== null) continue;
    await recomputeSegment(trx, t.deps, { ...segment, value }, t.now);
  }
  return changed;
};

/**
 * Replaces the address in the bodies of the account's stored webhook events that quote it (the
 * events about the address itself are deleted by an earlier step). An event not yet delivered is
 * sent with the replaced body. Returns how many events changed.
 */
export const eraseFromWebhookBodies: ErasureStep = async (trx, t) => {
  const marker = markerOf(t.deps.config.appSecret, t.key);
  let changed = 0;
  for (const event of await webhookEventsNaming(trx, t.userId, t.key)) {
    const body = replaceAddress(event.body, t.key, marker);
    if (body === event.body) continue;
    await setWebhookEventBody(trx, event.id, body);
    changed++;
  }
  return changed;
};

/** The row id in a Message-ID the service wrote (`<mac>.<row id>@<host>`), or null. */
function messageRowId(mail: string): number | null {
  const end = mail.indexOf('\r\n\r\n');
  const head = end < 0 ? mail : mail.slice(0, end);
  const m = /^message-id:\s*<[^>.]+\.(\d{1,15})@[^>]*>/im.exec(head);
  return m ? Number(m[1]) : null;
}

/**
 * The files of the outbox folder that are the account's mail and name the address anywhere in
 * their text (the To header, a body): one file read at a time, so a large folder costs time, not
 * memory. A file is the account's when its Message-ID names one of the account's messages. A
 * missing folder (the outbox never used) has none.
 */
export async function outboxFilesNaming(db: Db, outboxDir: string, userId: number, key: string): Promise<string[]> {
  let dir;
  try {
    dir = await opendir(outboxDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const pattern = addressPattern(key);
  const found: string[] = [];
  for await (const entry of dir) {
    // `.eml.tmp` files are being written; a message handed over during the erasure may be left.
    if (!entry.isFile() || !entry.name.endsWith('.eml')) continue;
    const path = join(outboxDir, entry.name);
    const mail = await readFile(path, 'utf8').catch(() => null);
    if (mail === null || !pattern.test(mail)) continue;
    const id = messageRowId(mail);
    if (id !== null && (await isMessageOf(db, userId, id))) found.push(path);
  }
  return found;
}

/** Deletes the files (a file already gone is fine). */
export async function removeFiles(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
