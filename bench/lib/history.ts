import { sql } from 'kysely';
import { engineOf, refreshAfterBulkLoad } from '../../src/db/dialect.js';
import type { Db } from '../../src/db/index.js';
import { isoMicros } from '../../src/util/time.js';

/**
 * Gives an account a history of `total` delivered messages (seeded by SQL, as bench/lib/db.ts
 * seeds contacts): copies of the completed send `sendId`, each one to every contact of a run of
 * `n` consecutive contacts (`firstId` …, whose addresses are `contact<from + j>@bench.example.com`),
 * so the addresses a later send mails have hundreds of earlier messages each, a third of them
 * opened, as an account after a year of weekly newsletters has.
 */
export async function seedHistory(
  db: Db,
  opts: { userId: number; sendId: number; firstId: number; from: number; n: number; total: number },
): Promise<void> {
  const { userId, sendId, firstId, from, n, total } = opts;
  const sends = Math.ceil(total / n);
  const template = await db.selectFrom('single_sends').selectAll().where('id', '=', sendId).executeTakeFirstOrThrow();
  const postgres = engineOf(db) === 'postgres';
  const at = isoMicros(new Date(Date.now() - 30 * 86_400_000));
  await db.transaction().execute(async (trx) => {
    for (let k = 0; k < sends; k++) {
      const { id: _id, ...copy } = template;
      const { id } = await trx
        .insertInto('single_sends')
        .values({ ...copy, utr: `history-${k}-${template.utr}`, single_send_name: `History ${k + 1}` })
        .returning('id')
        .executeTakeFirstOrThrow();
      const count = Math.min(n, total - k * n);
      const i = sql.ref('g.i');
      const email = sql`'contact' || (${i} + ${sql.lit(from)}) || '@bench.example.com'`;
      const values = sql`
        select ${userId}, 'single_send', ${id}, ${i} + ${sql.lit(firstId)}, ${email}, ${email}, 'sent', 1, ${at},
          '<history-' || ${sql.lit(k)} || '-' || ${i} || '@bench.example.com>', ${at},
          case when ${i} % 3 = 0 then 1 else 0 end, case when ${i} % 3 = 0 then ${at} end, ${at}, ${at}`;
      const rows = postgres
        ? sql`${values} from generate_series(0, ${sql.lit(count - 1)}) as g(i)`
        : sql`with recursive g(i) as (select 0 union all select i + 1 from g where i < ${sql.lit(count - 1)}) ${values} from g`;
      await sql`
        insert into mail_messages (user_id, kind, single_send_id, contact_id, email, email_key, state, attempts, next_attempt_at,
          message_id, sent_at, opens, first_opened_at, created_at, updated_at)
        ${rows}`.execute(trx);
    }
  });
  await refreshAfterBulkLoad(db, 'mail_messages');
}
