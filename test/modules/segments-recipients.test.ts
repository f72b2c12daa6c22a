import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, type TestContext } from '../helpers.js';
import { TS, RNF, Rnf, createSegment, recipients, listed, setupSegments } from './segments.helpers.js';

describe('segments: recipients and delete', () => {
  let t: TestContext;
  let type: number;
  before(async () => {
    ({ t, type } = await setupSegments());
  });
  after(() => t.close());

  describe('recipients', () => {
    let ct: number;
    let seg: number;
    let carol: number;
    before(async () => {
      ct = await make.contactType(t.a);
      carol = await make.contact(t.a, {
        contact_type_id: ct,
        first_name: 'Carol',
        last_name: 'King',
        email: 'carol@example.com',
        city: 'Leeds',
        address_line1: '1 Road',
        state: 'Yorks',
      });
      seg = await createSegment(t.a, { contact_type_id: ct, select_field: ['city'], select_operator: ['is'], value: ['leeds'] });
    });

    it('lists matched contacts in the Segment recipient shape (GET /segment/email/list)', async () => {
      const list = await recipients(t.a, seg);
      assert.equal(list.length, 1);
      assert.deepEqual(Object.keys(list[0]), [
        'id',
        'user_id',
        'segment_id',
        'contact_id',
        'first_name',
        'last_name',
        'email',
        'country',
        'state',
        'city',
        'address_line1',
        'created_at',
        'updated_at',
        'fullname',
      ]);
      assert.deepEqual(
        { ...list[0], id: 0, created_at: '', updated_at: '' },
        {
          id: 0,
          user_id: t.a.keys!.user_id,
          segment_id: seg,
          contact_id: carol,
          first_name: 'Carol',
          last_name: 'King',
          email: 'carol@example.com',
          country: 'India',
          state: 'Yorks',
          city: 'Leeds',
          address_line1: '1 Road',
          created_at: '',
          updated_at: '',
          fullname: 'Carol King',
        },
      );
      assert.match(list[0].created_at, TS);
    });

    it("answers Rnf (this casing) for a missing, malformed, unknown or another account's segment", async () => {
      const theirs = await createSegment(t.b, { contact_type_id: await make.contactType(t.b) });
      for (const query of [{}, { segment_id: 'abc' }, { segment_id: 999999 }, { segment_id: theirs }, { segment_id: '99999999999999' }]) {
        const r = await t.a.get('/segment/email/list', query);
        assert.equal(r.status, 404, JSON.stringify(query));
        assert.deepEqual(r.body, Rnf);
      }
    });

    it('adds a recipient by hand (POST /segment/email/store) and counts it', async () => {
      const r = await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'Dan', last_name: 'Hand', email: 'Dan@Example.com' });
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
      assert.equal(r.body.message, 'Added Successfully');
      const list = await recipients(t.a, seg);
      assert.deepEqual(
        { ...list[0], created_at: '', updated_at: '' },
        {
          id: r.body.id,
          user_id: t.a.keys!.user_id,
          segment_id: seg,
          contact_id: null,
          first_name: 'Dan',
          last_name: 'Hand',
          email: 'Dan@Example.com',
          country: null,
          state: null,
          city: null,
          address_line1: null,
          created_at: '',
          updated_at: '',
          fullname: 'Dan Hand',
        },
      );
      assert.equal((await listed(t.a, seg)).segment_emails_count, 2);
    });

    it('reports the required fields together', async () => {
      const r = await t.a.post('/segment/email/store', { segment_id: seg });
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          first_name: ['The first name field is required.'],
          last_name: ['The last name field is required.'],
          email: ['The email field is required.'],
        }),
      );
      const bad = await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'A', last_name: 'B', email: 'not-an-email' });
      assert.deepEqual(bad.body, fieldErrors({ email: ['The email must be a valid email address.'] }));
    });

    it('rejects an address already in the segment, hand-added or matched, in any case', async () => {
      for (const email of ['dan@example.com', 'CAROL@example.com']) {
        const r = await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'A', last_name: 'B', email });
        assert.equal(r.status, 422);
        assert.deepEqual(r.body, fieldErrors({ email: ['The email has already been taken.'] }));
      }
    });

    it("rejects a missing, unknown or another account's segment id as a field error", async () => {
      const theirs = await createSegment(t.b, { contact_type_id: await make.contactType(t.b) });
      const missing = await t.a.post('/segment/email/store', { first_name: 'A', last_name: 'B', email: 'x@example.com' });
      assert.deepEqual(missing.body, fieldErrors({ segment_id: ['The segment id field is required.'] }));
      for (const segment_id of [theirs, 999999]) {
        const r = await t.a.post('/segment/email/store', { segment_id, first_name: 'A', last_name: 'B', email: 'x@example.com' });
        assert.equal(r.status, 422);
        assert.deepEqual(r.body, fieldErrors({ segment_id: ['The selected segment id is invalid.'] }));
      }
      assert.equal((await recipients(t.b, theirs)).length, 0);
    });

    it('deletes a hand-added recipient (DELETE /segment/email/delete)', async () => {
      const r = await t.a.post('/segment/email/store', { segment_id: seg, first_name: 'Eve', last_name: 'Gone', email: 'eve@example.com' });
      const del = await t.a.delete('/segment/email/delete', { segment_recipient_id: r.body.id });
      assert.deepEqual(del.body, { status: 'success', message: 'Deleted Successfully' });
      assert.ok(!(await recipients(t.a, seg)).some((x) => x.id === r.body.id));
      const again = await t.a.delete('/segment/email/delete', { segment_recipient_id: r.body.id });
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, RNF);
    });

    it('removes a matched contact until the segment is edited, leaving the contact alone', async () => {
      const member = (await recipients(t.a, seg)).find((x) => x.contact_id === carol)!;
      const del = await t.a.delete('/segment/email/delete', { segment_recipient_id: member.id });
      assert.equal(del.status, 200);
      assert.ok(!(await recipients(t.a, seg)).some((x) => x.contact_id === carol));
      assert.equal((await t.a.get('/contacts/details', { contact_id: carol })).status, 200);
      // Still out after the contact changes…
      await t.a.post('/contacts/update', {
        contact_id: carol,
        contact_type_id: ct,
        first_name: 'Carol',
        email: 'carol@example.com',
        country: 101,
        city: 'Leeds',
      });
      assert.ok(!(await recipients(t.a, seg)).some((x) => x.contact_id === carol));
      // …and back once the segment is edited.
      await t.a.post('/segment/update', {
        segment_id: seg,
        segment_name: 'Leeds',
        contact_type_id: ct,
        select_field: ['city'],
        select_operator: ['is'],
        value: ['leeds'],
      });
      assert.ok((await recipients(t.a, seg)).some((x) => x.contact_id === carol));
    });

    it("answers RNF for a missing, malformed, unknown or another account's recipient, which stays", async () => {
      const theirSeg = await createSegment(t.b, { contact_type_id: await make.contactType(t.b) });
      const theirs = await t.b.post('/segment/email/store', {
        segment_id: theirSeg,
        first_name: 'B',
        last_name: 'B',
        email: 'b@example.com',
      });
      for (const query of [{}, { segment_recipient_id: 'x' }, { segment_recipient_id: 999999 }, { segment_recipient_id: theirs.body.id }]) {
        const r = await t.a.delete('/segment/email/delete', query);
        assert.equal(r.status, 404, JSON.stringify(query));
        assert.deepEqual(r.body, RNF);
      }
      assert.equal((await recipients(t.b, theirSeg)).length, 1);
    });

    it('pages the recipient list with meta', async () => {
      const r = await t.a.get('/segment/email/list', { segment_id: seg, page: 1, per_page: 1 });
      assert.equal(r.body.message.contactEmails.length, 1);
      assert.equal(r.body.message.meta.total, 2);
      // A page is serialised through the route's response schema, the whole list is streamed: same records.
      const page = await t.a.get('/segment/email/list', { segment_id: seg, per_page: 100 });
      assert.deepEqual(page.body.message.contactEmails, await recipients(t.a, seg));
    });
  });

  describe('DELETE /segment/delete', () => {
    it('deletes with the success text in both errors and message', async () => {
      const id = await createSegment(t.a, { contact_type_id: type });
      const r = await t.a.delete('/segment/delete', { segment_id: id });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'success', errors: 'Deleted Successfully', message: 'Deleted Successfully' });
      assert.equal(await listed(t.a, id), undefined);
      assert.deepEqual((await t.a.get('/segment/email/list', { segment_id: id })).body, Rnf);
      assert.deepEqual((await t.a.delete('/segment/delete', { segment_id: id })).body, RNF);
    });

    it("answers RNF for a missing, malformed, unknown or another account's segment, which stays", async () => {
      const theirs = await createSegment(t.b, { contact_type_id: await make.contactType(t.b) });
      for (const query of [{}, { segment_id: 'x' }, { segment_id: 999999 }, { segment_id: theirs }]) {
        const r = await t.a.delete('/segment/delete', query);
        assert.equal(r.status, 404, JSON.stringify(query));
        assert.deepEqual(r.body, RNF);
      }
      assert.ok(await listed(t.b, theirs));
    });
  });
});
