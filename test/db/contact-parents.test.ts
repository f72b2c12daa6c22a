import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { insertContactType } from '../../src/modules/contact-types/contact-types.queries.js';
import { ENGINE, freshDatabase } from '../helpers.js';

/** The error code of a refused foreign key, by engine. */
const FK_VIOLATION = ENGINE === 'postgres' ? '23503' : 'SQLITE_CONSTRAINT_FOREIGNKEY';

describe('contacts and their parents (foreign keys, on both engines)', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let a: number;
  let b: number;
  let typeA: number;
  let typeB: number;

  before(async () => {
    ({ database, drop } = await freshDatabase());
    a = (await createAccount(database.db, 'Parents A')).user_id;
    b = (await createAccount(database.db, 'Parents B')).user_id;
    typeA = await insertContactType(database.db, a, 'Type A', new Date());
    typeB = await insertContactType(database.db, b, 'Type B', new Date());
  });
  after(() => drop());

  const insertContact = (userId: number, typeId: number, email: string) =>
    sql`insert into contacts (user_id, contact_type_id, email, email_key, country, created_at, updated_at)
        values (${userId}, ${typeId}, ${email}, ${email}, '101', 'now', 'now')`.execute(database.db);
  const countContacts = async (userId: number) =>
    Number((await sql<{ n: number }>`select count(*) as n from contacts where user_id = ${userId}`.execute(database.db)).rows[0].n);

  it('takes a contact whose contact type exists, and refuses one whose type does not', async () => {
    await insertContact(a, typeA, 'ok@example.com');
    await assert.rejects(insertContact(a, 999_999, 'orphan@example.com'), { code: FK_VIOLATION });
    await assert.rejects(sql`update contacts set contact_type_id = 999999 where user_id = ${a}`.execute(database.db), {
      code: FK_VIOLATION,
    });
    assert.equal(await countContacts(a), 1);
  });

  it('refuses, in one statement of many rows, the whole statement when one row is bad', async () => {
    await assert.rejects(
      sql`insert into contacts (user_id, contact_type_id, email, email_key, country, created_at, updated_at)
          with recursive g(i) as (select 1 union all select i + 1 from g where i < 1000)
          select ${a}, case when i = 500 then 999999 else ${typeA} end, 'm' || i || '@example.com', 'm' || i || '@example.com', '101', 'now', 'now'
          from g`.execute(database.db),
      { code: FK_VIOLATION },
    );
    assert.equal(await countContacts(a), 1);
  });

  it('refuses to delete a contact type that contacts still name', async () => {
    await assert.rejects(sql`delete from contact_types where id = ${typeA}`.execute(database.db), { code: FK_VIOLATION });
    const empty = await insertContactType(database.db, a, 'Empty', new Date());
    await sql`delete from contact_types where id = ${empty}`.execute(database.db);
  });

  it("deletes an account's contacts and contact types with it", async () => {
    await insertContact(b, typeB, 'gone@example.com');
    await sql`delete from accounts where id = ${b}`.execute(database.db);
    assert.equal(await countContacts(b), 0);
    const { rows } = await sql<{ n: number }>`select count(*) as n from contact_types where user_id = ${b}`.execute(database.db);
    assert.equal(Number(rows[0].n), 0);
    assert.equal(await countContacts(a), 1);
  });

  it('refuses a contact whose type belongs to another account, on insert and on update', async () => {
    const c = (await createAccount(database.db, 'Parents C')).user_id;
    await assert.rejects(insertContact(c, typeA, 'cross@example.com'), { code: FK_VIOLATION });
    assert.equal(await countContacts(c), 0);
    const typeC = await insertContactType(database.db, c, 'Type C', new Date());
    await insertContact(c, typeC, 'own@example.com');
    await assert.rejects(sql`update contacts set contact_type_id = ${typeA} where user_id = ${c}`.execute(database.db), {
      code: FK_VIOLATION,
    });
    await assert.rejects(sql`update contacts set user_id = ${a} where user_id = ${c}`.execute(database.db), { code: FK_VIOLATION });
    assert.equal(await countContacts(c), 1);
  });

  it('moves a contact to another type of its own account', async () => {
    const other = await insertContactType(database.db, a, 'Type A2', new Date());
    await insertContact(a, typeA, 'moving@example.com');
    await sql`update contacts set contact_type_id = ${other} where email_key = 'moving@example.com'`.execute(database.db);
    const { rows } = await sql<{ t: number }>`select contact_type_id as t from contacts where email_key = 'moving@example.com'`.execute(
      database.db,
    );
    assert.equal(rows[0].t, other);
    await sql`delete from contacts where email_key = 'moving@example.com'`.execute(database.db);
  });
});
