import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { make, setup, type Client, type TestContext } from '../helpers.js';
import { segmentRecipients, syncSegmentMembership } from '../../src/modules/segments/segments.membership.js';
import { isoMicros } from '../../src/util/time.js';

type Cond = [field: string, op: string, ...values: string[]];

async function createSegment(c: Client, contactTypeId: number, conds: Cond[], queryType?: string): Promise<number> {
  const r = await c.post('/segment/create', {
    segment_name: 'S',
    contact_type_id: contactTypeId,
    select_field: conds.map((x) => x[0]),
    select_operator: conds.map((x) => x[1]),
    value: conds.flatMap((x) => x.slice(2)),
    ...(queryType ? { query_type: queryType } : {}),
  });
  if (r.status !== 200) throw new Error('segment: ' + r.text);
  return r.body.id;
}

async function memberIds(c: Client, segmentId: number): Promise<number[]> {
  const r = await c.get('/segment/email/list', { segment_id: segmentId });
  assert.equal(r.status, 200, r.text);
  return (r.body.message.contactEmails as Array<{ contact_id: number }>).map((x) => x.contact_id).sort((a, b) => a - b);
}

async function count(c: Client, segmentId: number): Promise<number | undefined> {
  const r = await c.get('/segment/list');
  return r.body.message.segments.find((s: { id: number }) => s.id === segmentId)?.segment_emails_count;
}

describe('segment membership by operator', () => {
  let t: TestContext;
  let type: number;
  const ids: Record<string, number> = {};
  const names = (list: number[]) => list.map((id) => Object.keys(ids).find((k) => ids[k] === id)).sort();
  const check = async (conds: Cond[], expected: string[], queryType?: string) => {
    const seg = await createSegment(t.a, type, conds, queryType);
    assert.deepEqual(names(await memberIds(t.a, seg)), expected, JSON.stringify(conds) + (queryType ?? ''));
    assert.equal(await count(t.a, seg), expected.length);
    await t.a.delete('/segment/delete', { segment_id: seg });
  };

  before(async () => {
    t = await setup();
    type = await make.contactType(t.a);
    await t.a.post('/custom-fields/save', { field_name: 'score', field_type: 'number' });
    await t.a.post('/custom-fields/save', { field_name: 'visit', field_type: 'datetime-local' });
    await t.a.post('/custom-fields/save', { field_name: 'tier', field_type: 'text' });
    const base = { contact_type_id: type };
    ids.ann = await make.contact(t.a, {
      ...base,
      first_name: 'Ann',
      city: 'Paris',
      age: 30,
      company_name: 'Save 50% Ltd',
      country: 101,
      custom_field: { score: '10', visit: '2024-05-01T10:00', tier: 'gold' },
    });
    ids.bob = await make.contact(t.a, {
      ...base,
      first_name: 'Bob',
      city: 'paris',
      age: 45,
      company_name: 'Save 500 Ltd',
      country: 231,
      custom_field: { score: '2.5', visit: '2024-05-02T00:00:00', tier: 'Silver' },
    });
    ids.cyd = await make.contact(t.a, { ...base, first_name: 'Cyd', city: 'Berlin', company_name: 'a_b corp', country: 82 });
    ids.dee = await make.contact(t.a, {
      ...base,
      first_name: 'Dee',
      age: 18,
      company_name: 'axb corp',
      country: 101,
      custom_field: { score: '-3', visit: '2023-12-31T23:59' },
    });
    // Another type and another account with look-alike contacts never join.
    await make.contact(t.a, { first_name: 'Ann', city: 'Paris' });
    await make.contact(t.b, { first_name: 'Ann', city: 'Paris' });
  });
  after(() => t.close());

  it('is / is not: case-insensitive; is not also matches an empty value', async () => {
    await check([['first_name', 'is', 'ANN']], ['ann']);
    await check([['first_name', 'is not', 'ann']], ['bob', 'cyd', 'dee']);
    await check([['city', 'is not', 'PARIS']], ['cyd', 'dee']);
    await check([['tier', 'is', 'silver']], ['bob']);
  });

  it('contains / does not contain / starts with / ends with, with % and _ taken literally', async () => {
    await check([['city', 'contains', 'AR']], ['ann', 'bob']);
    await check([['city', 'does not contain', 'ar']], ['cyd', 'dee']);
    await check([['company_name', 'contains', '50%']], ['ann']);
    await check([['company_name', 'contains', 'a_b']], ['cyd']);
    await check([['first_name', 'starts with', 'b']], ['bob']);
    await check([['first_name', 'ends with', 'N']], ['ann']);
    await check([['company_name', 'starts with', '%']], []);
  });

  it('is empty / is not empty', async () => {
    await check([['city', 'is empty']], ['dee']);
    await check([['city', 'is not empty']], ['ann', 'bob', 'cyd']);
    await check([['tier', 'is empty']], ['cyd', 'dee']);
    await check([['age', 'is not empty']], ['ann', 'bob', 'dee']);
  });

  it('greater than / less than / between / is compare number fields as numbers', async () => {
    await check([['age', 'greater than', '29']], ['ann', 'bob']);
    await check([['age', 'less than', '30']], ['dee']);
    await check([['age', 'between', '18', '30']], ['ann', 'dee']);
    await check([['age', 'between', '30', '18']], ['ann', 'dee']);
    await check([['age', 'is', '30.0']], ['ann']);
    await check([['age', 'is not', '30']], ['bob', 'cyd', 'dee']);
    // As text '10' < '2.5'; as numbers it is greater.
    await check([['score', 'greater than', '2']], ['ann', 'bob']);
    await check([['score', 'less than', '0']], ['dee']);
  });

  it('before / after / between / is compare dates; a date alone is the whole day', async () => {
    await check([['visit', 'before', '2024-05-01']], ['dee']);
    await check([['visit', 'after', '2024-05-01']], ['bob']);
    await check([['visit', 'after', '2024-05-01T09:00']], ['ann', 'bob']);
    await check([['visit', 'after', '2024-05-01T10:00']], ['bob']);
    await check([['visit', 'before', '2024-05-01T10:00:00']], ['dee']);
    await check([['visit', 'between', '2023-12-31', '2024-05-01']], ['ann', 'dee']);
    await check([['visit', 'is', '2024-05-02']], ['bob']);
    await check([['visit', 'is not', '2024-05-02']], ['ann', 'cyd', 'dee']);
  });

  it('compares created_at as a date-time', async () => {
    const today = isoMicros(t.clock.now()).slice(0, 10);
    await check([['created_at', 'after', '2000-01-01']], ['ann', 'bob', 'cyd', 'dee']);
    await check([['created_at', 'before', '2000-01-01T00:00']], []);
    await check([['created_at', 'between', '2000-01-01', today]], ['ann', 'bob', 'cyd', 'dee']);
  });

  it('reads country by id, name or ISO-2 code', async () => {
    await check([['country', 'is', 'india']], ['ann', 'dee']);
    await check([['country', 'is', '101']], ['ann', 'dee']);
    await check([['country', 'is', 'AE']], ['bob']);
    await check([['country', 'contains', 'germ']], ['cyd']);
    await check([['country', 'is not', 'India']], ['bob', 'cyd']);
    await check([['country', 'is', 'Atlantis']], []);
  });

  it('combines conditions with and (default) or or; no condition takes the whole type', async () => {
    await check(
      [
        ['city', 'contains', 'par'],
        ['age', 'greater than', '40'],
      ],
      ['bob'],
    );
    await check(
      [
        ['city', 'contains', 'par'],
        ['age', 'greater than', '40'],
      ],
      ['bob'],
      'and',
    );
    await check(
      [
        ['city', 'is', 'berlin'],
        ['age', 'less than', '20'],
      ],
      ['cyd', 'dee'],
      'or',
    );
    await check(
      [
        ['city', 'is not empty'],
        ['tier', 'is not', 'gold'],
      ],
      ['bob', 'cyd'],
      'and',
    );
    await check([], ['ann', 'bob', 'cyd', 'dee']);
  });
});

describe('segment membership follows contact changes', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  const contactForm = (type: number, fields: Record<string, unknown>) => ({
    contact_type_id: type,
    first_name: 'X',
    email: `${Math.random().toString(36).slice(2)}@example.com`,
    country: 101,
    ...fields,
  });

  it('a new segment lists its members newest contact first, their ids in the same order', async () => {
    const type = await make.contactType(t.a);
    const made = [];
    for (const city of ['Oslo', 'oslo', 'OSLO', 'Bergen']) made.push(await make.contact(t.a, { contact_type_id: type, city }));
    const seg = await createSegment(t.a, type, [['city', 'is', 'Oslo']]);
    const rows = (await t.a.get('/segment/email/list', { segment_id: seg })).body.message.contactEmails as Array<{
      id: number;
      contact_id: number;
    }>;
    assert.deepEqual(
      rows.map((r) => r.contact_id),
      made.slice(0, 3).reverse(),
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      [...rows.map((r) => r.id)].sort((a, b) => b - a),
    );
  });

  it('a new contact that matches joins; one that does not, does not', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, [['city', 'is', 'Oslo']]);
    const yes = await make.contact(t.a, { contact_type_id: type, city: 'oslo' });
    await make.contact(t.a, { contact_type_id: type, city: 'Bergen' });
    assert.deepEqual(await memberIds(t.a, seg), [yes]);
  });

  it('an update enters and leaves, and a member that still matches keeps its row', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, [['age', 'greater than', '60']]);
    const form = contactForm(type, { age: 50 });
    const id = await make.contact(t.a, form);
    assert.deepEqual(await memberIds(t.a, seg), []);
    await t.a.post('/contacts/update', { ...form, contact_id: id, age: 70 });
    assert.deepEqual(await memberIds(t.a, seg), [id]);
    const before = (await t.a.get('/segment/email/list', { segment_id: seg })).body.message.contactEmails[0];
    await t.a.post('/contacts/update', { ...form, contact_id: id, age: 71, first_name: 'Renamed' });
    const still = (await t.a.get('/segment/email/list', { segment_id: seg })).body.message.contactEmails[0];
    assert.deepEqual([still.id, still.created_at, still.first_name], [before.id, before.created_at, 'Renamed']);
    await t.a.post('/contacts/update', { ...form, contact_id: id, age: 20 });
    assert.deepEqual(await memberIds(t.a, seg), []);
    assert.equal(await count(t.a, seg), 0);
  });

  it('a contact moved to another contact type leaves the segment and joins those of its new type', async () => {
    const [from, to] = [await make.contactType(t.a), await make.contactType(t.a)];
    const segFrom = await createSegment(t.a, from, []);
    const segTo = await createSegment(t.a, to, []);
    const form = contactForm(from, {});
    const id = await make.contact(t.a, form);
    await t.a.post('/contacts/update', { ...form, contact_id: id, contact_type_id: to });
    assert.deepEqual(await memberIds(t.a, segFrom), []);
    assert.deepEqual(await memberIds(t.a, segTo), [id]);
  });

  it('a deleted contact leaves; a bulk delete removes several', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, []);
    const [a, b, c] = [
      await make.contact(t.a, { contact_type_id: type }),
      await make.contact(t.a, { contact_type_id: type }),
      await make.contact(t.a, { contact_type_id: type }),
    ];
    await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'H', last_name: 'H', email: 'hand@example.com' });
    assert.equal(await count(t.a, seg), 4);
    await t.a.delete('/contacts/delete', { contact_id: a });
    assert.deepEqual(
      await memberIds(t.a, seg),
      [b, c, null as unknown as number].sort((x, y) => x - y),
    );
    const r = await t.a.post('/contacts/bulk-delete', { strIds: [b, c] });
    assert.equal(r.status, 200);
    assert.equal(await count(t.a, seg), 1);
    // Another account deleting ids it does not own changes nothing here.
    const d = await make.contact(t.a, { contact_type_id: type });
    assert.equal((await t.b.post('/contacts/bulk-delete', { strIds: [d] })).status, 404);
    assert.equal(await count(t.a, seg), 2);
  });

  it('deleting the contact type empties its segments of contacts; the segments stay', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, [['email', 'is not empty']]);
    await make.contact(t.a, { contact_type_id: type });
    await make.contact(t.a, { contact_type_id: type });
    assert.equal(await count(t.a, seg), 2);
    const r = await t.a.delete('/contacts-type/delete', { contact_type_id: type });
    assert.equal(r.status, 200);
    assert.equal(await count(t.a, seg), 0);
  });

  it('a deleted custom field reads as empty in the conditions that name it', async () => {
    const type = await make.contactType(t.a);
    const field = await t.a.post('/custom-fields/save', { field_name: 'points', field_type: 'number' });
    const high = await make.contact(t.a, { contact_type_id: type, custom_field: { points: '90' } });
    const none = await make.contact(t.a, { contact_type_id: type });
    const segHigh = await createSegment(t.a, type, [['points', 'greater than', '50']]);
    const segEmpty = await createSegment(t.a, type, [['points', 'is empty']]);
    const segNot = await createSegment(t.a, type, [['points', 'is not', '90']]);
    assert.deepEqual(await memberIds(t.a, segHigh), [high]);
    assert.deepEqual(await memberIds(t.a, segEmpty), [none]);
    assert.deepEqual(await memberIds(t.a, segNot), [none]);
    assert.equal((await t.a.delete('/custom-fields/delete', { id: field.body.id })).status, 200);
    assert.deepEqual(await memberIds(t.a, segHigh), []);
    assert.deepEqual(await memberIds(t.a, segEmpty), [high, none]);
    assert.deepEqual(await memberIds(t.a, segNot), [high, none]);
    const listed = (await t.a.get('/segment/list')).body.message.segments.find((s: { id: number }) => s.id === segHigh);
    assert.deepEqual(listed.select_field, ['points']);
    // A contact added afterwards follows the same reading.
    const later = await make.contact(t.a, { contact_type_id: type });
    assert.deepEqual(await memberIds(t.a, segEmpty), [high, none, later]);
  });

  it('an import (contacts written in bulk, then one sync for the contact type) joins the matches', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, [['city', 'starts with', 'new']]);
    const old = await make.contact(t.a, { contact_type_id: type, city: 'New Delhi' });
    const userId = t.a.keys!.user_id;
    const now = isoMicros(t.clock.now());
    const row = (i: number, city: string) => ({
      user_id: userId,
      contact_type_id: type,
      first_name: `I${i}`,
      last_name: '',
      email: `imp${i}@example.com`,
      email_key: `imp${i}@example.com`,
      country: '101',
      city,
      created_at: now,
      updated_at: now,
    });
    const inserted = await t.database.db.transaction().execute(async (trx) => {
      const rows = await trx
        .insertInto('contacts')
        .values([row(1, 'Newcastle'), row(2, 'York'), row(3, 'new york')])
        .returning('id')
        .execute();
      // An import also updates existing contacts by email: one leaves.
      await trx.updateTable('contacts').set({ city: 'Leeds' }).where('id', '=', old).execute();
      await syncSegmentMembership(trx, t.deps, userId, { contactTypeId: type });
      return rows.map((r) => r.id);
    });
    assert.deepEqual(await memberIds(t.a, seg), [inserted[0], inserted[2]]);
  });

  it('a CSV upload (POST /contacts/upload-csv) brings new and updated contacts in and out', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, [['age', 'greater than', '40']]);
    const leaving = await make.contact(t.a, { contact_type_id: type, email: 'old@example.com', age: 50 });
    assert.deepEqual(await memberIds(t.a, seg), [leaving]);
    const csv = 'email,first_name,country,age\nold@example.com,Old,101,30\nnew1@example.com,New,101,41\nnew2@example.com,Young,101,20\n';
    const boundary = 'segmentsboundary';
    const payload =
      `--${boundary}\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`;
    const r = await t.a.request('POST', '/contacts/upload-csv', {
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    assert.equal(r.status, 200, r.text);
    const list = (await t.a.get('/segment/email/list', { segment_id: seg })).body.message.contactEmails;
    assert.deepEqual(
      list.map((x: { email: string }) => x.email),
      ['new1@example.com'],
    );
  });

  it('segmentRecipients yields every member in keyset batches, hand-added ones included', async () => {
    const type = await make.contactType(t.a);
    const seg = await createSegment(t.a, type, []);
    const contacts = [];
    for (let i = 0; i < 5; i++) contacts.push(await make.contact(t.a, { contact_type_id: type, first_name: `C${i}` }));
    await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'Hand', last_name: 'Added', email: 'hand.added@example.com' });
    await t.a.delete('/contacts/delete', { contact_id: contacts[0] });
    const batches = [];
    for await (const batch of segmentRecipients(t.database.db, t.a.keys!.user_id, seg, 2)) batches.push(batch);
    assert.deepEqual(
      batches.map((b) => b.length),
      [2, 2, 1],
    );
    const all = batches.flat();
    assert.deepEqual(
      all.map((r) => r.contact_id),
      [...contacts.slice(1), null],
    );
    assert.deepEqual(
      all.map((r) => r.recipient_id),
      [...all.map((r) => r.recipient_id)].sort((a, b) => a - b),
    );
    assert.equal(all[4].email, 'hand.added@example.com');
    assert.equal(all[0].first_name, 'C1');
    const theirs = [];
    for await (const batch of segmentRecipients(t.database.db, t.b.keys!.user_id, seg)) theirs.push(batch);
    assert.deepEqual(theirs, []);
  });
});
