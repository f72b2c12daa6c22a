import type { SelectQueryBuilder } from 'kysely';
import type { ListSource } from './list.js';
import { toCount } from '../db/dialect.js';

/**
 * A list source over one query: `base()` selects the account's live rows (already scoped),
 * this adds keyset batching, paging and counting on `idColumn`.
 */
export function queryListSource<Row extends { id: number }, Item>(
  base: () => SelectQueryBuilder<any, any, Row>,
  idColumn: string,
  map: (rows: Row[]) => Promise<Item[]> | Item[],
): ListSource<Row, Item> {
  return {
    batch: (before, limit) =>
      base()
        .$if(before !== null, (q) => q.where(idColumn, '<', before))
        .orderBy(idColumn, 'desc')
        .limit(limit)
        .execute(),
    page: (offset, limit) => base().orderBy(idColumn, 'desc').limit(limit).offset(offset).execute(),
    count: async () => {
      const row = await base()
        .clearSelect()
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      return toCount((row as { n?: unknown } | undefined)?.n);
    },
    map,
  };
}
