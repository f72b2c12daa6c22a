import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, type TestContext, assertNeedsKeys } from '../helpers.js';
import { TS, RNF, createSegment, recipients, listed, setupSegments } from './segments.helpers.js';

describe('segments', () => {
  let t: TestContext;
  let type: number;
  before(async () => {
    ({ t, type } = await setupSegments());
  });
  after(() => t.close());

  describe('POST /segment/create', () => {
    it('creates a segment and returns its id beside the text', async () => {
      const r = await t.a.post('/segment/create', {
        segment_name: 'Adults',
        contact_type_id: type,
        select_field: ['age'],
        select_operator: ['greater than'],
        value: ['17'],
      });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
      assert.equal(r.body.message, 'Added Successfully');
      assert.ok(Number.isInteger(r.body.id));
    });

    it('reports missing name and contact type together', async () => {
      const r = await t.a.post('/segment/create', {});
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({ segment_name: ['The segment name field is required.'], contact_type_id: ['The contact type id field is required.'] }),
      );
    });

    it("rejects another account's contact type and an unknown one", async () => {
      const theirs = await make.contactType(t.b);
      for (const id of [theirs, 999999]) {
        const r = await t.a.post('/segment/create', { segment_name: 'X', contact_type_id: id });
        assert.equal(r.status, 422);
        assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
      }
    });

    it('rejects unknown fields and operators, and operators that do not suit the field', async () => {
      const r = await t.a.post('/segment/create', {
        segment_name: 'X',
        contact_type_id: type,
        select_field: ['shoe_colour', 'first_name', 'first_name', 'age'],
        select_operator: ['is', 'resembles', 'greater than', 'before'],
        value: ['red', 'x', 'y', '2024-01-01'],
      });
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          'select_field.0': ['The selected select field.0 is invalid.'],
          'select_operator.1': ['The selected select operator.1 is invalid.'],
          'select_operator.2': ['The selected select operator.2 is invalid.'],
          'select_operator.3': ['The selected select operator.3 is invalid.'],
        }),
      );
    });

    it('checks that every condition has its field, operator and values', async () => {
      const r = await t.a.post('/segment/create', {
        segment_name: 'X',
        contact_type_id: type,
        select_field: ['age', 'email', 'city'],
        select_operator: ['between', 'is empty'],
        value: ['10'],
      });
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          'value.1': ['The value.1 field is required.'],
          'select_operator.2': ['The select operator.2 field is required.'],
        }),
      );
      const extra = await t.a.post('/segment/create', {
        segment_name: 'X',
        contact_type_id: type,
        select_field: ['email'],
        select_operator: ['is'],
        value: ['a@b.c', 'surplus'],
      });
      assert.deepEqual(extra.body, fieldErrors({ value: ['The value must not have more than 1 items.'] }));
      const noField = await t.a.post('/segment/create', { segment_name: 'X', contact_type_id: type, select_operator: ['is empty'] });
      assert.deepEqual(noField.body, fieldErrors({ 'select_field.0': ['The select field.0 field is required.'] }));
    });

    it('checks numbers for number fields and dates for date fields', async () => {
      const r = await t.a.post('/segment/create', {
        segment_name: 'X',
        contact_type_id: type,
        select_field: ['age', 'join_date', 'created_at', 'birth_date'],
        select_operator: ['greater than', 'before', 'between', 'is'],
        value: ['old', '2024-02-30', '2024-01-01', 'tomorrow', '2024-01-01T10:00'],
      });
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          'value.0': ['The value.0 must be a number.'],
          'value.1': ['The value.1 is not a valid date.'],
          'value.3': ['The value.3 is not a valid date.'],
        }),
      );
    });

    it('rejects a query_type other than and/or, with the other failures', async () => {
      const r = await t.a.post('/segment/create', { contact_type_id: type, query_type: 'xor' });
      assert.deepEqual(
        r.body,
        fieldErrors({ segment_name: ['The segment name field is required.'], query_type: ['The selected query type is invalid.'] }),
      );
    });

    it('answers malformed input with 422, never 500', async () => {
      const bad = [
        { segment_name: 'X', contact_type_id: 'abc' },
        { segment_name: 'X', contact_type_id: 99999999999 },
        { segment_name: 'X', contact_type_id: type, select_field: { a: { b: 'c' } } },
        { segment_name: 'X', contact_type_id: type, select_field: ['age'], select_operator: ['is'], value: [['1', '2']] },
        { segment_name: 'X', contact_type_id: type, select_field: ['age'], select_operator: { x: 'is' }, value: { a: 'b' } },
        {
          segment_name: 'X',
          contact_type_id: type,
          select_field: ['age'],
          select_operator: ['is'],
          value: ['1'],
          query_type: ['and', 'or'],
        },
        { segment_name: 'x'.repeat(300), contact_type_id: type },
      ];
      for (const form of bad) {
        const r = await t.a.post('/segment/create', form);
        assert.equal(r.status, 422, JSON.stringify(form) + ' → ' + r.text);
        assert.equal(r.body.status, 'failed');
      }
    });

    it('accepts JSON bodies and field names in any case, stored as defined', async () => {
      const r = await t.a.request('POST', '/segment/create', {
        json: {
          segment_name: 'Json',
          contact_type_id: type,
          select_field: ['First_Name'],
          select_operator: ['Is Not'],
          value: ['Bob'],
          query_type: 'or',
        },
      });
      assert.equal(r.status, 200, r.text);
      const s = await listed(t.a, r.body.id);
      assert.deepEqual([s.select_field, s.select_operator, s.value, s.query_type], [['first_name'], ['is not'], ['Bob'], 'or']);
    });
  });

  describe('GET /segment/list', () => {
    it('lists newest first with the condition arrays and segment_emails_count', async () => {
      const ct = await make.contactType(t.a);
      await make.contact(t.a, { contact_type_id: ct, city: 'Paris' });
      await make.contact(t.a, { contact_type_id: ct, city: 'Lyon' });
      const id = await createSegment(t.a, {
        segment_name: 'Parisians',
        contact_type_id: ct,
        select_field: ['city', 'email'],
        select_operator: ['is', 'is not empty'],
        value: ['paris'],
      });
      const r = await t.a.get('/segment/list');
      assert.equal(r.status, 200);
      const list = r.body.message.segments;
      assert.equal(list[0].id, id);
      assert.deepEqual(Object.keys(list[0]), [
        'id',
        'user_id',
        'contact_type_id',
        'segment_name',
        'select_field',
        'select_operator',
        'value',
        'query_type',
        'deleted_at',
        'created_at',
        'updated_at',
        'segment_emails_count',
      ]);
      assert.deepEqual(list[0], {
        ...list[0],
        user_id: t.a.keys!.user_id,
        contact_type_id: ct,
        segment_name: 'Parisians',
        select_field: ['city', 'email'],
        select_operator: ['is', 'is not empty'],
        value: ['paris'],
        query_type: 'and',
        deleted_at: null,
        segment_emails_count: 1,
      });
      assert.match(list[0].created_at, TS);
      const ids = list.map((s: { id: number }) => s.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => y - x),
      );
      const other = await t.b.get('/segment/list');
      assert.deepEqual(other.body, { status: 'success', message: { segments: [] } });
    });

    it('pages with meta', async () => {
      const r = await t.a.get('/segment/list', { page: 1, per_page: 1 });
      assert.equal(r.body.message.segments.length, 1);
      assert.equal(r.body.message.meta.per_page, 1);
      assert.ok(r.body.message.meta.total >= 2);
      // A page is serialised through the route's response schema, the whole list is streamed: same records.
      const page = await t.a.get('/segment/list', { per_page: 100 });
      assert.deepEqual(page.body.message.segments, (await t.a.get('/segment/list')).body.message.segments);
    });

    it('needs the key headers', async () => {
      await assertNeedsKeys(t.anon, [['GET', '/segment/list']]);
    });
  });

  describe('POST /segment/update', () => {
    it('replaces the definition and recomputes the members', async () => {
      const ct = await make.contactType(t.a);
      const ann = await make.contact(t.a, { contact_type_id: ct, first_name: 'Ann' });
      const bob = await make.contact(t.a, { contact_type_id: ct, first_name: 'Bob' });
      const id = await createSegment(t.a, { contact_type_id: ct, select_field: ['first_name'], select_operator: ['is'], value: ['ann'] });
      assert.deepEqual(
        (await recipients(t.a, id)).map((r) => r.contact_id),
        [ann],
      );
      const r = await t.a.post('/segment/update', {
        segment_id: id,
        segment_name: 'Bobs',
        contact_type_id: ct,
        select_field: ['first_name'],
        select_operator: ['starts with'],
        value: ['B'],
      });
      assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
      assert.deepEqual(
        (await recipients(t.a, id)).map((r) => r.contact_id),
        [bob],
      );
      const s = await listed(t.a, id);
      assert.deepEqual([s.segment_name, s.select_operator, s.value, s.segment_emails_count], ['Bobs', ['starts with'], ['B'], 1]);
    });

    it('needs segment_id, and reports it with the other failures', async () => {
      const r = await t.a.post('/segment/update', { segment_name: 'X' });
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({ segment_id: ['The segment id field is required.'], contact_type_id: ['The contact type id field is required.'] }),
      );
    });

    it("answers RNF for an unknown or another account's segment and leaves it unchanged", async () => {
      const ct = await make.contactType(t.b);
      const theirs = await createSegment(t.b, { segment_name: 'Theirs', contact_type_id: ct });
      for (const segment_id of [theirs, 999999]) {
        const r = await t.a.post('/segment/update', { segment_id, segment_name: 'Mine', contact_type_id: type });
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, RNF);
      }
      assert.equal((await listed(t.b, theirs)).segment_name, 'Theirs');
    });
  });
});
