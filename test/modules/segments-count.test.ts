import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, fieldErrors, make, setup, type TestContext } from '../helpers.js';
import { createSegment, listed } from './segments.helpers.js';

type Cond = [field: string, op: string, ...values: string[]];

/** A definition's form fields: the condition arrays (and `query_type` when given). */
function definition(contactTypeId: number, conds: Cond[], queryType?: string) {
  return {
    contact_type_id: contactTypeId,
    select_field: conds.map((c) => c[0]),
    select_operator: conds.map((c) => c[1]),
    value: conds.flatMap((c) => c.slice(2)),
    ...(queryType ? { query_type: queryType } : {}),
  };
}

describe('POST /segment/count', () => {
  let t: TestContext;
  let type: number;

  before(async () => {
    t = await setup();
    type = await make.contactType(t.a);
    await t.a.post('/custom-fields/save', { field_name: 'score', field_type: 'number' });
    await t.a.post('/custom-fields/save', { field_name: 'visit', field_type: 'datetime-local' });
    const people: Array<Record<string, unknown>> = [
      { first_name: 'Ann', city: 'Paris', age: 30, custom_field: { score: '10', visit: '2024-05-01T10:00' } },
      { first_name: 'Bob', city: 'Lyon', age: 17, custom_field: { score: '2.5' } },
      { first_name: 'Cid', city: 'paris', age: 45, custom_field: { visit: '2023-12-31T23:59' } },
      { first_name: 'Dee', city: '', age: 52 },
      { first_name: 'Eve', city: 'Nice', country: 38 },
    ];
    for (const p of people) await make.contact(t.a, { contact_type_id: type, ...p });
    // Not counted: a deleted contact, a contact of another type, and another account's contacts.
    const gone = await make.contact(t.a, { contact_type_id: type, city: 'Paris' });
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: gone })).status, 200);
    await make.contact(t.a, { city: 'Paris' });
    await make.contact(t.b, { city: 'Paris' });
  });
  after(() => t.close());

  it('answers how many contacts of the type match, saving nothing', async () => {
    const r = await t.a.post('/segment/count', definition(type, [['city', 'is', 'PARIS']]));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: { count: 2 } });
    assert.deepEqual((await t.a.get('/segment/list')).body.message.segments, []);
  });

  it('counts every contact of the type without conditions, and follows query_type', async () => {
    assert.deepEqual((await t.a.post('/segment/count', { contact_type_id: type })).body.message, { count: 5 });
    const both: Cond[] = [
      ['city', 'is', 'paris'],
      ['age', 'greater than', '40'],
    ];
    assert.equal((await t.a.post('/segment/count', definition(type, both))).body.message.count, 1);
    assert.equal((await t.a.post('/segment/count', definition(type, both, 'and'))).body.message.count, 1);
    assert.equal((await t.a.post('/segment/count', definition(type, both, 'or'))).body.message.count, 3);
  });

  it('accepts a JSON body', async () => {
    const r = await t.a.request('POST', '/segment/count', { json: definition(type, [['age', 'between', '18', '50']]) });
    assert.deepEqual(r.body, { status: 'success', message: { count: 2 } });
  });

  it('equals the membership of a segment created with the same definition', async () => {
    const cases: Array<[Cond[], string?]> = [
      [[['city', 'is', 'paris']]],
      [[['city', 'is empty']]],
      [[['city', 'is not', 'paris']]],
      [[['age', 'between', '50', '18']]],
      [[['score', 'greater than', '3']]],
      [[['visit', 'before', '2024-05-01']]],
      [[['created_at', 'after', '2000-01-01']]],
      [[['country', 'is', 'IN']]],
      [
        [
          ['first_name', 'starts with', 'a'],
          ['city', 'contains', 'ic'],
        ],
        'or',
      ],
      [[], undefined],
    ];
    for (const [conds, queryType] of cases) {
      const body = definition(type, conds, queryType);
      const counted = await t.a.post('/segment/count', body);
      assert.equal(counted.status, 200, counted.text);
      const id = await createSegment(t.a, body);
      const segment = await listed(t.a, id);
      assert.equal(counted.body.message.count, segment.segment_emails_count, JSON.stringify(conds));
      await t.a.delete('/segment/delete', { segment_id: id });
    }
  });

  it('needs contact_type_id, with the same field errors as create', async () => {
    const r = await t.a.post('/segment/count', {});
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The contact type id field is required.'] }));
    const bad = await t.a.post('/segment/count', { contact_type_id: 'abc' });
    assert.deepEqual(bad.body, fieldErrors({ contact_type_id: ['The contact type id must be an integer.'] }));
  });

  it("rejects another account's contact type, and an unknown one, as create does", async () => {
    const theirs = await make.contactType(t.b);
    for (const id of [theirs, 999999]) {
      const counted = await t.a.post('/segment/count', { contact_type_id: id });
      assert.equal(counted.status, 422);
      assert.deepEqual(counted.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
      const created = await t.a.post('/segment/create', { segment_name: 'X', contact_type_id: id });
      assert.deepEqual(created.body, counted.body);
    }
  });

  it('reports each bad condition with the field errors of create', async () => {
    const bodies: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [
        {
          contact_type_id: type,
          select_field: ['shoe_colour', 'first_name', 'first_name', 'age'],
          select_operator: ['is', 'resembles', 'greater than', 'before'],
          value: ['red', 'x', 'y', '2024-01-01'],
        },
        {
          'select_field.0': ['The selected select field.0 is invalid.'],
          'select_operator.1': ['The selected select operator.1 is invalid.'],
          'select_operator.2': ['The selected select operator.2 is invalid.'],
          'select_operator.3': ['The selected select operator.3 is invalid.'],
        },
      ],
      [
        { contact_type_id: type, select_field: ['age', 'email', 'city'], select_operator: ['between', 'is empty'], value: ['10'] },
        { 'value.1': ['The value.1 field is required.'], 'select_operator.2': ['The select operator.2 field is required.'] },
      ],
      [
        { contact_type_id: type, select_field: ['email'], select_operator: ['is'], value: ['a@b.c', 'surplus'] },
        { value: ['The value must not have more than 1 items.'] },
      ],
      [{ contact_type_id: type, select_operator: ['is empty'] }, { 'select_field.0': ['The select field.0 field is required.'] }],
      [
        {
          contact_type_id: type,
          select_field: ['age', 'join_date', 'created_at', 'birth_date'],
          select_operator: ['greater than', 'before', 'between', 'is'],
          value: ['old', '2024-02-30', '2024-01-01', 'tomorrow', '2024-01-01T10:00'],
        },
        {
          'value.0': ['The value.0 must be a number.'],
          'value.1': ['The value.1 is not a valid date.'],
          'value.3': ['The value.3 is not a valid date.'],
        },
      ],
      [{ contact_type_id: type, query_type: 'xor' }, { query_type: ['The selected query type is invalid.'] }],
      [
        { query_type: 'xor' },
        { contact_type_id: ['The contact type id field is required.'], query_type: ['The selected query type is invalid.'] },
      ],
    ];
    for (const [body, errors] of bodies) {
      const counted = await t.a.post('/segment/count', body);
      assert.equal(counted.status, 422, JSON.stringify(body));
      assert.deepEqual(counted.body, fieldErrors(errors), JSON.stringify(body));
      const created = await t.a.post('/segment/create', { segment_name: 'X', ...body });
      assert.deepEqual(created.body, counted.body, 'create answers the same');
    }
  });

  it('answers malformed input with 422, never 500', async () => {
    const bad = [
      { contact_type_id: 99999999999 },
      { contact_type_id: type, select_field: { a: { b: 'c' } } },
      { contact_type_id: type, select_field: ['age'], select_operator: ['is'], value: [['1', '2']] },
      { contact_type_id: type, select_field: ['age'], select_operator: { x: 'is' }, value: { a: 'b' } },
      { contact_type_id: type, select_field: ['age'], select_operator: ['is'], value: ['1'], query_type: ['and', 'or'] },
      { contact_type_id: type, select_field: ['x'.repeat(300)], select_operator: ['is'], value: ['1'] },
    ];
    for (const form of bad) {
      const r = await t.a.post('/segment/count', form);
      assert.equal(r.status, 422, JSON.stringify(form) + ' → ' + r.text);
      assert.equal(r.body.status, 'failed');
    }
  });

  it('needs the key headers', async () => {
    await assertNeedsKeys(t.anon, [['POST', '/segment/count']]);
  });
});
