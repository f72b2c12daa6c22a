import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testClock } from '../../src/util/clock.js';
import { make, setup } from '../helpers.js';
import { createSegment } from './segments.helpers.js';
import { senderForm } from './senders.helpers.js';
import { group, sendForm, verifiedSender, type SendsContext } from './single-sends.helpers.js';

// Far from the real date: a time read from the system clock instead of the app's would not match.
const CREATED = '2031-05-06T07:08:09.123Z';
const UPDATED = '2031-05-06T08:08:09.123Z';
const DELETED = '2031-05-06T09:08:09.123Z';
const micros = (iso: string) => iso.replace(/Z$/, '000Z');

type Table = 'contact_types' | 'contacts' | 'segments' | 'senders' | 'single_sends';

describe('stored times come from the app clock, not the system clock', () => {
  let t: SendsContext;
  const clock = testClock(CREATED);

  before(async () => {
    t = { ...(await setup({}, { clock })), clock };
  });
  after(() => t.close());

  async function times(table: Table, id: number) {
    // Kysely cannot type a column set shared by a union of tables; every one of these has the three.
    return (t.database.db as any)
      .selectFrom(table)
      .select(['created_at', 'updated_at', 'deleted_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow() as Promise<{ created_at: string; updated_at: string; deleted_at: string | null }>;
  }

  /** Creates at CREATED, updates at UPDATED, deletes at DELETED, checking the row after each. */
  async function lifecycle(
    table: Table,
    create: () => Promise<number>,
    update: (id: number) => Promise<unknown>,
    del: (id: number) => Promise<unknown>,
  ) {
    clock.set(CREATED);
    const id = await create();
    assert.deepEqual(
      await times(table, id),
      { created_at: micros(CREATED), updated_at: micros(CREATED), deleted_at: null },
      `${table} create`,
    );
    clock.set(UPDATED);
    await update(id);
    assert.deepEqual(
      await times(table, id),
      { created_at: micros(CREATED), updated_at: micros(UPDATED), deleted_at: null },
      `${table} update`,
    );
    clock.set(DELETED);
    await del(id);
    assert.deepEqual(
      await times(table, id),
      { created_at: micros(CREATED), updated_at: micros(DELETED), deleted_at: micros(DELETED) },
      `${table} delete`,
    );
  }

  const ok = async (res: Promise<{ status: number; text: string }>) => {
    const r = await res;
    assert.equal(r.status, 200, r.text);
  };

  it('contact types', async () => {
    await lifecycle(
      'contact_types',
      () => make.contactType(t.a),
      (id) => ok(t.a.post('/contacts-type/update', { id, name: `Renamed ${id}` })),
      (id) => ok(t.a.delete('/contacts-type/delete', { contact_type_id: id })),
    );
  });

  it('contacts, and deleting a contact type deletes its contacts at the same time', async () => {
    const type = await make.contactType(t.a);
    const person = { contact_type_id: type, first_name: 'Ada', last_name: 'Lovelace', email: 'ada.times@example.com', country: 101 };
    await lifecycle(
      'contacts',
      () => make.contact(t.a, person),
      (id) => ok(t.a.post('/contacts/update', { contact_id: id, ...person, first_name: 'Augusta' })),
      (id) => ok(t.a.delete('/contacts/delete', { contact_id: id })),
    );
    clock.set(CREATED);
    const kept = await make.contact(t.a, { contact_type_id: type });
    clock.set(DELETED);
    await ok(t.a.delete('/contacts-type/delete', { contact_type_id: type }));
    assert.equal((await times('contacts', kept)).deleted_at, micros(DELETED));
  });

  it('segments, and the time a contact joins one', async () => {
    const type = await make.contactType(t.a);
    await make.contact(t.a, { contact_type_id: type, first_name: 'Ann' });
    const rule = (name: string) => ({ contact_type_id: type, select_field: ['first_name'], select_operator: ['is'], value: [name] });
    await lifecycle(
      'segments',
      async () => {
        const id = await createSegment(t.a, rule('ann'));
        const member = await t.database.db.selectFrom('segment_recipients').select('created_at').where('segment_id', '=', id).execute();
        assert.deepEqual(member, [{ created_at: micros(CREATED) }], 'a member joins at the clock time');
        return id;
      },
      (id) => ok(t.a.post('/segment/update', { segment_id: id, segment_name: 'Renamed', ...rule('Ann') })),
      (id) => ok(t.a.delete('/segment/delete', { segment_id: id })),
    );
  });

  it('senders', async () => {
    await lifecycle(
      'senders',
      async () => {
        const r = await t.a.post('/sender/save', senderForm());
        assert.equal(r.status, 200, r.text);
        return r.body.id as number;
      },
      (id) => ok(t.a.post('/sender/update', { sender_id: id, ...senderForm() })),
      (id) => ok(t.a.delete('/sender/delete', { sender_id: id })),
    );
  });

  it('single sends', async () => {
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a, 'Times'), type: await make.contactType(t.a) };
    const utrs = new Map<number, string>();
    await lifecycle(
      'single_sends',
      async () => {
        const r = await t.a.post('/single/send/create', sendForm(base, { draft: 1 }));
        assert.equal(r.status, 200, r.text);
        const row = await t.database.db
          .selectFrom('single_sends')
          .select('id')
          .where('utr', '=', r.body.message.utr)
          .executeTakeFirstOrThrow();
        utrs.set(row.id, r.body.message.utr);
        return row.id;
      },
      (id) => ok(t.a.post('/single/send/update', { utr: utrs.get(id), ...sendForm(base, { draft: 1, subject: 'Later' }) })),
      (id) => ok(t.a.delete('/single/send/delete', { utr: utrs.get(id) })),
    );
  });
});
