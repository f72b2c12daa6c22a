import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { countContacts } from '../../src/modules/contacts/contacts.queries.js';
import { Client, ENGINE, setup, type TestContext } from '../helpers.js';
import { upload } from '../modules/contacts-csv.helpers.js';

/**
 * `contact_types.contacts_count` (kept by triggers, migration 008) against a real `count(*)`,
 * after every step of random sequences of the operations that move it: add, update (type change
 * included), delete, bulk delete, CSV import (creates, updates, re-added deleted addresses),
 * contact type delete, a contact deleted by plain SQL, and account deletion. On PostgreSQL the
 * operations of a step run concurrently, on several connections.
 */

/** A small address pool, so adds collide, imports update, and deleted addresses come back. */
const EMAILS = Array.from({ length: 12 }, (_, i) => `p${i}@example.com`);

type Op =
  | { kind: 'addType' }
  | { kind: 'add'; type: number; email: number }
  | { kind: 'update'; contact: number; type: number; email: number }
  | { kind: 'delete'; contact: number }
  | { kind: 'bulkDelete'; contacts: number[] }
  | { kind: 'import'; type: number; emails: number[] }
  | { kind: 'deleteType'; type: number }
  | { kind: 'sqlDelete'; contact: number }
  | { kind: 'deleteAccount' };

const pick = fc.nat({ max: 1000 });
const email = fc.nat({ max: EMAILS.length - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'addType' as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('add' as const), type: pick, email }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('update' as const), contact: pick, type: pick, email }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), contact: pick }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('bulkDelete' as const), contacts: fc.array(pick, { minLength: 1, maxLength: 4 }) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('import' as const), type: pick, emails: fc.array(email, { minLength: 1, maxLength: 8 }) }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('deleteType' as const), type: pick }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('sqlDelete' as const), contact: pick }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'deleteAccount' as const }), weight: 1 },
);
/** A step: one operation, or (PostgreSQL) two or three at once. */
const step = fc.array(op, { minLength: 1, maxLength: ENGINE === 'postgres' ? 3 : 1 });

describe('list totals (contacts_count kept by triggers)', () => {
  let t: TestContext;
  /** The accounts the operations act on; a deleted one is replaced by a new one. */
  const accounts: Client[] = [];

  before(async () => {
    t = await setup();
    accounts.push(t.a, t.b);
  });
  after(() => t.close());

  const db = () => t.database.db;
  const liveTypes = (c: Client) =>
    db()
      .selectFrom('contact_types')
      .select('id')
      .where('user_id', '=', c.keys!.user_id)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
  const liveContacts = (c: Client) =>
    db()
      .selectFrom('contacts')
      .select(['id', 'contact_type_id'])
      .where('user_id', '=', c.keys!.user_id)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
  /** The `k`-th element, cycling; undefined when there is none. */
  const nth = <T>(xs: T[], k: number): T | undefined => (xs.length ? xs[k % xs.length] : undefined);

  /** Runs one operation on one account; any answer but a 5xx is fine (422s and 404s included). */
  async function run(c: Client, o: Op): Promise<void> {
    let status = 200;
    const types = (await liveTypes(c)).map((r) => r.id);
    const contacts = await liveContacts(c);
    switch (o.kind) {
      case 'addType':
        status = (await c.post('/contacts-type/add', { name: `Type ${Math.random().toString(36).slice(2)}` })).status;
        break;
      case 'add': {
        const type = nth(types, o.type);
        if (type) status = (await c.post('/contacts/add', { contact_type_id: type, email: EMAILS[o.email], country: 101 })).status;
        break;
      }
      case 'update': {
        const contact = nth(contacts, o.contact);
        const type = nth(types, o.type);
        if (contact && type) {
          status = (
            await c.post('/contacts/update', { contact_id: contact.id, contact_type_id: type, email: EMAILS[o.email], country: 101 })
          ).status;
        }
        break;
      }
      case 'delete': {
        const contact = nth(contacts, o.contact);
        if (contact) status = (await c.delete('/contacts/delete', { contact_id: contact.id })).status;
        break;
      }
      case 'bulkDelete': {
        const ids = o.contacts.map((k) => nth(contacts, k)?.id).filter((id) => id !== undefined);
        if (ids.length) status = (await c.post('/contacts/bulk-delete', { strIds: ids })).status;
        break;
      }
      case 'import': {
        const type = nth(types, o.type);
        const csv = 'email,country,first_name\n' + o.emails.map((e, i) => `${EMAILS[e]},101,Row${i}`).join('\n') + '\n';
        if (type) status = (await upload(c, type, csv)).status;
        break;
      }
      case 'deleteType': {
        const type = nth(types, o.type);
        if (type) status = (await c.delete('/contacts-type/delete', { contact_type_id: type })).status;
        break;
      }
      case 'sqlDelete': {
        const contact = nth(contacts, o.contact);
        if (contact) await sql`delete from contacts where id = ${contact.id}`.execute(db());
        break;
      }
      case 'deleteAccount': {
        const i = accounts.indexOf(c);
        accounts[i] = new Client(t.app, await createAccount(db(), `Account ${Math.random()}`));
        await sql`delete from accounts where id = ${c.keys!.user_id}`.execute(db());
        break;
      }
    }
    assert.ok(status < 500, `${o.kind} answered ${status}`);
  }

  /** The largest count checked so far: shows that the sequences did move counts. */
  let largest = 0;

  /** Every stored count of the accounts' types (all types with `everywhere`) equals a real count, and each account's total its live contacts. */
  async function assertTotals(everywhere = false): Promise<void> {
    const users = accounts.map((c) => c.keys!.user_id);
    const { rows } = await sql<{ id: number; stored: number; real: number }>`
      select t.id, t.contacts_count as stored,
        (select count(*) from contacts c where c.contact_type_id = t.id and c.deleted_at is null) as real
      from contact_types t ${everywhere ? sql`` : sql`where t.user_id in (${sql.join(users)})`}`.execute(db());
    for (const r of rows) {
      assert.equal(Number(r.stored), Number(r.real), `contact type ${r.id}: stored ${r.stored}, counted ${r.real}`);
      largest = Math.max(largest, Number(r.real));
    }
    for (const c of accounts) {
      const real = (await liveContacts(c)).length;
      assert.equal(await countContacts(db(), c.keys!.user_id), real);
      const page = await c.get('/contacts/list', { page: 1, per_page: 1 });
      assert.equal(page.body.message.meta.total, real);
    }
  }

  /** Two new accounts with two contact types each: every run starts apart from the state earlier runs left. */
  async function freshAccounts(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      const c = new Client(t.app, await createAccount(db(), `Run account ${i}`));
      for (const name of ['First', 'Second']) await c.post('/contacts-type/add', { name });
      accounts[i] = c;
    }
  }

  it('match a real count after every step of random sequences of operations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(step, fc.array(fc.nat({ max: 1 }), { minLength: 3, maxLength: 3 })), { minLength: 1, maxLength: 12 }),
        async (steps) => {
          await freshAccounts();
          for (const [ops, who] of steps) {
            // Each operation on one of the two accounts; a step's operations run together, but an
            // account's deletion alone (a request racing its own account's deletion is another matter).
            const targets = ops.map((o, i) => [accounts[who[i]], o] as const);
            if (ops.some((o) => o.kind === 'deleteAccount')) for (const [c, o] of targets) await run(c, o);
            else await Promise.all(targets.map(([c, o]) => run(c, o)));
            await assertTotals();
          }
        },
      ),
      { numRuns: ENGINE === 'postgres' ? 15 : 25 },
    );
    await assertTotals(true);
    // The sequences did move counts: some contact type had several contacts at some point.
    assert.ok(largest >= 3, `largest count seen: ${largest}`);
  });

  it('counts what a statement of many rows inserts, updates and deletes, and what the account deletion removes', async () => {
    const c = accounts[0];
    const [one, two] = [
      await c.post('/contacts-type/add', { name: 'Many one' }),
      await c.post('/contacts-type/add', { name: 'Many two' }),
    ].map((r) => r.body.id as number);
    const csv = 'email,country\n' + Array.from({ length: 1500 }, (_, i) => `m${i}@example.com,101`).join('\n') + '\n';
    assert.equal((await upload(c, one, csv)).status, 200);
    await sql`update contacts set contact_type_id = ${two} where contact_type_id = ${one} and email_key like 'm1%'`.execute(db());
    await sql`update contacts set deleted_at = 'now' where contact_type_id = ${two} and email_key like 'm10%'`.execute(db());
    await assertTotals();
    const counts = await db()
      .selectFrom('contact_types')
      .select(['id', 'contacts_count'])
      .where('id', 'in', [one, two])
      .orderBy('id')
      .execute();
    // m1…: 1, 10–19, 100–199, 1000–1499 = 611 moved; m10…: 10, 100–109, 1000–1099 = 111 of them deleted.
    assert.deepEqual(
      counts.map((r) => r.contacts_count),
      [1500 - 611, 611 - 111],
    );
    await sql`delete from accounts where id = ${c.keys!.user_id}`.execute(db());
    const left = await db().selectFrom('contact_types').select('id').where('id', 'in', [one, two]).execute();
    assert.deepEqual(left, []);
    accounts[0] = new Client(t.app, await createAccount(db(), 'After deletion'));
    await assertTotals();
  });
});
