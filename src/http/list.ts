import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ok } from './envelope.js';

export interface Paging {
  page?: number;
  per_page?: number;
}

/** How a list reads its rows: newest first, in keyset batches or one page. */
export interface ListSource<Row, Item> {
  /** Rows with id below `beforeId` (all when null), newest first, at most `limit`. */
  batch(beforeId: number | null, limit: number): Promise<Row[]>;
  /** The page `offset`..`offset+limit`, newest first. */
  page(offset: number, limit: number): Promise<Row[]>;
  /** How many rows the whole list has (`meta.total`). */
  count(): Promise<number>;
  /** Row → API shape, for a whole batch (so lookups can be made once per batch). */
  map(rows: Row[]): Promise<Item[]> | Item[];
}

const BATCH = 1000;

/**
 * The success envelope of an empty list, cut around its array: `ok()` builds it, so the streamed
 * list cannot drift from every other success body.
 */
function envelopeAround(key: string): { head: string; tail: string } {
  const json = JSON.stringify(ok({ [key]: [] }));
  const marker = `${JSON.stringify(key)}:[]`;
  const at = json.indexOf(marker);
  if (at < 0) throw new Error(`list envelope: no array under ${key}`);
  const cut = at + marker.length - 1; // between '[' and ']'
  return { head: json.slice(0, cut), tail: json.slice(cut) };
}

async function* streamBody<Row extends { id: number }, Item>(key: string, source: ListSource<Row, Item>): AsyncGenerator<string> {
  const { head, tail } = envelopeAround(key);
  yield head;
  let before: number | null = null;
  let first = true;
  for (;;) {
    const rows = await source.batch(before, BATCH);
    if (rows.length === 0) break;
    const items = await source.map(rows);
    let chunk = '';
    for (const item of items) {
      chunk += (first ? '' : ',') + JSON.stringify(item);
      first = false;
    }
    yield chunk;
    if (rows.length < BATCH) break;
    before = rows[rows.length - 1].id;
  }
  yield tail;
}

/**
 * Sends `{status:'success', message:{[key]: [...]}}`: the whole list streamed in keyset batches
 * when neither `page` nor `per_page` is given, else one page with `meta` (`page`, `per_page` and
 * `total`, the count of the whole list).
 */
export async function sendList<Row extends { id: number }, Item>(
  reply: FastifyReply,
  key: string,
  query: Paging,
  source: ListSource<Row, Item>,
): Promise<FastifyReply> {
  if (query.page === undefined && query.per_page === undefined) {
    reply.type('application/json; charset=utf-8');
    return reply.send(Readable.from(streamBody(key, source), { objectMode: false }));
  }
  const page = query.page ?? 1;
  const perPage = query.per_page ?? 50;
  const [rows, total] = await Promise.all([source.page((page - 1) * perPage, perPage), source.count()]);
  return reply.send(ok({ [key]: await source.map(rows), meta: { page, per_page: perPage, total } }));
}
