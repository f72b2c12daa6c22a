import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { assertNeedsKeys, drainQueue, fieldErrors } from '../helpers.js';
import { validateDesign } from '../../src/delivery/render.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import { createSend, group, Rnf, sendForm, setupSends, TS, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';
import { mjmlText } from '../support/designs.js';

describe('saved designs', () => {
  let t: SendsContext;
  const create = async (name: string, text = 'Hello ((first_name))') => {
    const r = await t.a.post('/designs/create', { name, template_json: mjmlText(text) });
    assert.equal(r.status, 200, r.text);
    return r.body.id as number;
  };

  before(async () => {
    t = await setupSends({ sink: true });
  });
  after(() => t.close());

  it('needs the keys on every route', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/designs'],
      ['GET', '/designs/details?id=1'],
      ['POST', '/designs/create'],
      ['POST', '/designs/update'],
      ['POST', '/designs/duplicate'],
      ['DELETE', '/designs/delete?id=1'],
    ]);
  });

  it('saves a design, answers its id, and compiles its HTML with the placeholders kept', async () => {
    const r = await t.a.post('/designs/create', { name: 'Spring <b>news</b>', template_json: mjmlText('Hello ((first_name))') });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.status, 'success');
    assert.equal(r.body.message, 'Added Successfully');
    assert.equal(typeof r.body.id, 'number');
    const d = await t.a.get('/designs/details', { id: r.body.id });
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(Object.keys(d.body), ['status', 'message']);
    const design = d.body.message.design;
    assert.deepEqual(Object.keys(design), ['id', 'name', 'template_json', 'html_code', 'created_at', 'updated_at']);
    assert.equal(design.id, r.body.id);
    assert.equal(design.name, 'Spring <b>news</b>');
    assert.equal(design.template_json, mjmlText('Hello ((first_name))'));
    assert.match(design.html_code, /^<!doctype html>/i);
    assert.ok(design.html_code.includes('Hello ((first_name))'));
    assert.match(design.created_at, TS);
    assert.equal(design.updated_at, design.created_at);
  });

  it('lists the designs newest first, paged on request, only the account’s own', async () => {
    const first = await create('First');
    const second = await create('Second');
    const r = await t.a.get('/designs');
    assert.equal(r.status, 200, r.text);
    const ids = r.body.message.designs.map((d: { id: number }) => d.id);
    assert.deepEqual(ids.slice(0, 2), [second, first]);
    const page = await t.a.get('/designs', { page: 1, per_page: 1 });
    assert.equal(page.body.message.designs.length, 1);
    assert.equal(page.body.message.meta.total, ids.length);
    assert.deepEqual((await t.b.get('/designs')).body, { status: 'success', message: { designs: [] } });
  });

  it('reports missing and invalid fields', async () => {
    assert.deepEqual((await t.a.post('/designs/create', {})).body, {
      status: 'failed',
      errors: { name: ['The name field is required.'], template_json: ['The template json field is required.'] },
    });
    const empty = await t.a.post('/designs/create', { name: '', template_json: '' });
    assert.equal(empty.status, 422);
    assert.deepEqual(
      empty.body,
      fieldErrors({ name: ['The name field is required.'], template_json: ['The template json field is required.'] }),
    );
    const long = await t.a.post('/designs/create', { name: 'x'.repeat(256), template_json: mjmlText('Hi') });
    assert.equal(long.status, 422);
    assert.deepEqual(long.body, fieldErrors({ name: ['The name must not be greater than 255 characters.'] }));
  });

  it('checks template_json as a send’s own, with the same texts', async () => {
    const cases: Array<[string, string]> = [
      ['{"tagName":"mjml"', 'The template json must be valid JSON.'],
      ['{"tagName":"div"}', 'The template json must be an MJML document in JSON form: the root element must be "mjml".'],
      [
        '{"tagName":"mjml","children":[]}',
        'The template json must be an MJML document in JSON form: "mjml" must contain an "mj-body" element.',
      ],
      [mjmlText('Hi').replace('"mj-text"', '"mj-nope"'), 'The template json uses an unknown element: mj-nope.'],
    ];
    for (const [json, message] of cases) {
      assert.equal(await validateDesign(json, 'template json'), message);
      const r = await t.a.post('/designs/create', { name: 'Broken', template_json: json });
      assert.equal(r.status, 422, json);
      assert.deepEqual(r.body, fieldErrors({ template_json: [message] }));
      const send = await t.a.post('/single/send/create', { template_id: 1, template_json: json });
      assert.deepEqual(send.body.errors.template_json, [message], 'a send says the same');
    }
  });

  it('updates the name and the document, each alone', async () => {
    const id = await create('Before');
    const before = (await t.a.get('/designs/details', { id })).body.message.design;
    const r = await t.a.post('/designs/update', { id, name: 'After' });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    let d = (await t.a.get('/designs/details', { id })).body.message.design;
    assert.equal(d.name, 'After');
    assert.equal(d.template_json, before.template_json);
    assert.ok(d.updated_at >= before.updated_at);
    assert.deepEqual((await t.a.post('/designs/update', { id, template_json: mjmlText('Changed ((last_name))') })).body, {
      status: 'success',
      message: 'Updated Successfully',
    });
    d = (await t.a.get('/designs/details', { id })).body.message.design;
    assert.equal(d.name, 'After');
    assert.equal(d.template_json, mjmlText('Changed ((last_name))'));
    assert.ok(d.html_code.includes('Changed ((last_name))'));
    assert.ok(!d.html_code.includes('Hello'));
  });

  it('refuses a bad update and changes nothing', async () => {
    const id = await create('Kept');
    assert.deepEqual((await t.a.post('/designs/update', {})).body, fieldErrors({ id: ['The id field is required.'] }));
    assert.deepEqual((await t.a.post('/designs/update', { id: 'abc' })).body, fieldErrors({ id: ['The id must be an integer.'] }));
    // An empty optional field is "not given" (as everywhere in the API): the name stays.
    const bad = await t.a.post('/designs/update', { id, name: '', template_json: '{"tagName":"div"}' });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.body,
      fieldErrors({ template_json: ['The template json must be an MJML document in JSON form: the root element must be "mjml".'] }),
    );
    const long = await t.a.post('/designs/update', { id, name: 'z'.repeat(256), template_json: '{' });
    assert.deepEqual(
      long.body,
      fieldErrors({
        name: ['The name must not be greater than 255 characters.'],
        template_json: ['The template json must be valid JSON.'],
      }),
    );
    const d = (await t.a.get('/designs/details', { id })).body.message.design;
    assert.equal(d.name, 'Kept');
    assert.equal(d.template_json, mjmlText('Hello ((first_name))'));
  });

  it('duplicates a design as “<name> (copy)”', async () => {
    const id = await create('Original', 'Copied ((email))');
    const r = await t.a.post('/designs/duplicate', { id });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Duplicated Successfully');
    assert.notEqual(r.body.id, id);
    const original = (await t.a.get('/designs/details', { id })).body.message.design;
    const copy = (await t.a.get('/designs/details', { id: r.body.id })).body.message.design;
    assert.equal(copy.name, 'Original (copy)');
    assert.equal(copy.template_json, original.template_json);
    assert.equal(copy.html_code, original.html_code);
    const long = await create('y'.repeat(255));
    const longCopy = (await t.a.post('/designs/duplicate', { id: long })).body.id;
    const name = (await t.a.get('/designs/details', { id: longCopy })).body.message.design.name;
    assert.equal(name.length, 255);
    assert.ok(name.endsWith('y (copy)'));
    assert.deepEqual((await t.a.post('/designs/duplicate', {})).body, fieldErrors({ id: ['The id field is required.'] }));
  });

  it('deletes a design', async () => {
    const id = await create('Doomed');
    assert.deepEqual((await t.a.delete('/designs/delete', { id })).body, { status: 'success', message: 'Deleted Successfully' });
    const gone = await t.a.get('/designs/details', { id });
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, Rnf);
    assert.equal((await t.a.delete('/designs/delete', { id })).status, 404);
  });

  it("answers Record not found for another account's design or an unknown id", async () => {
    const id = await create('Mine');
    for (const r of [
      await t.b.get('/designs/details', { id }),
      await t.a.get('/designs/details', { id: 999999 }),
      await t.a.get('/designs/details', { id: 'abc' }),
      await t.a.get('/designs/details'),
      await t.b.post('/designs/update', { id, name: 'Taken over' }),
      await t.b.post('/designs/duplicate', { id }),
      await t.b.delete('/designs/delete', { id }),
      await t.a.delete('/designs/delete'),
    ]) {
      assert.equal(r.status, 404, r.text);
      assert.deepEqual(r.body, Rnf);
    }
    assert.equal((await t.a.get('/designs/details', { id })).body.message.design.name, 'Mine');
    assert.equal((await t.b.get('/designs')).body.message.designs.length, 0);
  });

  it('a single send made with a saved design (template 1 and its template_json) mails that design', async () => {
    const id = await create('Mailed', 'Saved design says hi to ((first_name))');
    const design = (await t.a.get('/designs/details', { id })).body.message.design;
    const { type } = await typeWith(t.a, [['reader@example.com', 'Rita']]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    await createSend(t.a, sendForm(base, { template_html: '', template_json: design.template_json, recipient_id: [`contacts_${type}`] }));
    await startDueSends(t.deps, t.clock.now());
    t.clock.advance(2000);
    await drainQueue(t);
    const [got] = t.sink!.to('reader@example.com');
    assert.ok(got, 'the mail arrived');
    const mail = await simpleParser(got.raw);
    assert.ok((mail.html as string).includes('Saved design says hi to Rita'), 'the design, personalised, in the HTML');
    assert.match(mail.text!, /Saved design says hi to Rita/);
  });
});
