import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, setup, type TestContext } from '../helpers.js';
import { MISSING_CONTACT_FIELDS } from '../modules/contacts.helpers.js';

/** A multipart/form-data body of plain fields (and optionally one file part). */
function multipart(fields: Array<[string, string]>, file?: { name: string; filename: string; content: string }) {
  const boundary = '----campaigntest' + Math.random().toString(16).slice(2);
  let body = '';
  for (const [name, value] of fields) body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  if (file) {
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: text/plain\r\n\r\n${file.content}\r\n`;
  }
  body += `--${boundary}--\r\n`;
  return { payload: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('request body parsing', () => {
  let t: TestContext;
  let typeId: number;
  before(async () => {
    t = await setup();
    typeId = await make.contactType(t.a, 'Parsing');
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'shoe_size', field_type: 'number' })).status, 200);
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'nickname_text', field_type: 'text' })).status, 200);
  });
  after(() => t.close());

  async function liveIds(ids: number[]): Promise<number[]> {
    const rows = await t.database.db.selectFrom('contacts').select('id').where('id', 'in', ids).where('deleted_at', 'is', null).execute();
    return rows.map((r) => r.id).sort((x, y) => x - y);
  }

  it('reads urlencoded indexed arrays strIds[0], strIds[1]', async () => {
    const ids = [await make.contact(t.a, { contact_type_id: typeId }), await make.contact(t.a, { contact_type_id: typeId })];
    const r = await t.a.request('POST', '/contacts/bulk-delete', {
      payload: `strIds[0]=${ids[0]}&strIds[1]=${ids[1]}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual(await liveIds(ids), []);
  });

  it('reads more than 20 indexed entries as one array (no qs arrayLimit cut-off)', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await make.contact(t.a, { contact_type_id: typeId }));
    const payload = ids.map((id, i) => `strIds%5B${i}%5D=${id}`).join('&');
    const r = await t.a.request('POST', '/contacts/bulk-delete', {
      payload,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await liveIds(ids), []);
  });

  it('reads custom_field[name] as an object', async () => {
    const r = await t.a.request('POST', '/contacts/add', {
      payload: `contact_type_id=${typeId}&email=cf%40example.com&country=101&custom_field%5Bshoe_size%5D=42&custom_field[nickname_text]=Addy`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 200, r.text);
    const d = await t.a.get('/contacts/details', { contact_id: r.body.id });
    assert.deepEqual(d.body.message.contact.custom_field, {
      shoe_size: { field_name: 'Shoe Size', field_value: '42' },
      nickname_text: { field_name: 'Nickname Text', field_value: 'Addy' },
    });
  });

  it('reads multipart form fields (no file) on a normal POST route', async () => {
    const m = multipart([
      ['contact_type_id', String(typeId)],
      ['email', 'multi@example.com'],
      ['country', '101'],
      ['first_name', '  Grace  '],
      ['custom_field[shoe_size]', '38'],
    ]);
    const r = await t.a.request('POST', '/contacts/add', m);
    assert.equal(r.status, 200, r.text);
    const c = (await t.a.get('/contacts/details', { contact_id: r.body.id })).body.message.contact;
    assert.equal(c.first_name, 'Grace');
    assert.equal(c.email, 'multi@example.com');
    assert.equal(c.custom_field.shoe_size.field_value, '38');
  });

  it('reads multipart indexed arrays', async () => {
    const ids = [await make.contact(t.a, { contact_type_id: typeId }), await make.contact(t.a, { contact_type_id: typeId })];
    const r = await t.a.request(
      'POST',
      '/contacts/bulk-delete',
      multipart([
        ['strIds[0]', String(ids[0])],
        ['strIds[1]', String(ids[1])],
      ]),
    );
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await liveIds(ids), []);
  });

  it('ignores a file part sent to a route that takes no file', async () => {
    const m = multipart([['name', 'With a file']], { name: 'file', filename: 'x.txt', content: 'hello' });
    const r = await t.a.request('POST', '/contacts-type/add', m);
    assert.equal(r.status, 200, r.text);
  });

  it('reports multipart validation failures like form ones', async () => {
    const r = await t.a.request('POST', '/contacts/add', multipart([['first_name', 'x']]));
    assert.equal(r.status, 422);
    assert.deepEqual(Object.keys(r.body.errors).sort(), ['contact_type_id', 'country', 'email']);
  });

  it('accepts JSON bodies with the same names, arrays as JSON arrays and numbers as numbers', async () => {
    const add = await t.a.request('POST', '/contacts/add', {
      json: { contact_type_id: typeId, email: 'json@example.com', country: 101, age: 30, custom_field: { shoe_size: 44 } },
    });
    assert.equal(add.status, 200, add.text);
    const c = (await t.a.get('/contacts/details', { contact_id: add.body.id })).body.message.contact;
    assert.equal(c.custom_field.shoe_size.field_value, '44');
    assert.equal(c.custom_field.age.field_value, '30');
    const ids = [await make.contact(t.a, { contact_type_id: typeId }), await make.contact(t.a, { contact_type_id: typeId })];
    const del = await t.a.request('POST', '/contacts/bulk-delete', { json: { strIds: ids } });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(await liveIds(ids), []);
    const strings = await t.a.request('POST', '/contacts/bulk-delete', { json: { strIds: [String(add.body.id)] } });
    assert.equal(strings.status, 200, strings.text);
  });

  it('answers JSON of the wrong shape with 422, never 500', async () => {
    for (const json of [[1, 2], 'text', 42, null, { strIds: 'abc' }, { strIds: [{ a: 1 }] }, { strIds: [] }]) {
      const r = await t.a.request('POST', '/contacts/bulk-delete', {
        payload: JSON.stringify(json),
        headers: { 'content-type': 'application/json' },
      });
      assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(json)} → ${r.status} ${r.text}`);
      assert.equal(r.body.status, 'failed');
    }
    const nested = await t.a.request('POST', '/contacts/add', { json: { contact_type_id: { a: 1 }, email: ['x'], country: true } });
    assert.equal(nested.status, 422, nested.text);
  });

  it('answers a JSON array or scalar body with 400, and a form scalar where an object belongs with 422', async () => {
    for (const payload of ['[]', '"text"', '42']) {
      const r = await t.a.request('POST', '/contacts/add', { payload, headers: { 'content-type': 'application/json' } });
      assert.equal(r.status, 400, payload);
      assert.deepEqual(r.body, { status: 'failed', errors: 'The request body must be an object of fields.' });
    }
    const form = await t.a.post('/contacts/add', {
      contact_type_id: typeId,
      email: 'scalar@example.com',
      country: 101,
      custom_field: 'abc',
    });
    assert.equal(form.status, 422);
    assert.deepEqual(form.body, fieldErrors({ custom_field: ['The custom field must be an array.'] }));
  });

  it('treats an empty JSON body as no fields, so DELETE with a JSON content type works', async () => {
    const id = await make.contact(t.a, { contact_type_id: typeId });
    const del = await t.a.request('DELETE', `/contacts/delete?contact_id=${id}`, {
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(del.status, 200, del.text);
    const post = await t.a.request('POST', '/contacts/bulk-delete', { payload: '  ', headers: { 'content-type': 'application/json' } });
    assert.equal(post.status, 422);
    assert.deepEqual(post.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
  });

  it('treats whitespace-only required values as missing', async () => {
    const r = await t.a.post('/contacts/add', { contact_type_id: '  ', email: ' \t ', country: '   ' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, MISSING_CONTACT_FIELDS);
  });

  it('trims values before storing them', async () => {
    const r = await t.a.post('/contacts/add', { contact_type_id: typeId, email: '  trim@example.com ', country: ' 101 ', city: '  Pune ' });
    assert.equal(r.status, 200, r.text);
    const c = (await t.a.get('/contacts/details', { contact_id: r.body.id })).body.message.contact;
    assert.equal(c.email, 'trim@example.com');
    assert.equal(c.city, 'Pune');
    assert.equal(c.country, '101');
  });

  it('removes NUL characters from values and names, which PostgreSQL cannot store', async () => {
    const r = await t.a.post('/contacts/add', {
      contact_type_id: typeId,
      email: 'nul@example.com',
      country: '101',
      city: 'Pu\u0000ne',
      'custom_field[nick\u0000name_text]': 'A\u0000dy',
    });
    assert.equal(r.status, 200, r.text);
    const c = (await t.a.get('/contacts/details', { contact_id: r.body.id })).body.message.contact;
    assert.equal(c.city, 'Pune');
    assert.deepEqual(c.custom_field, { nickname_text: { field_name: 'Nickname Text', field_value: 'Ady' } });
    const blank = await t.a.post('/contacts/add', { contact_type_id: typeId, email: '\u0000', country: '101' });
    assert.deepEqual(blank.body, fieldErrors({ email: ['The email field is required.'] }));
  });

  it('reports several failing fields together, each with its own array', async () => {
    const r = await t.a.post('/contacts/add', { contact_type_id: 'abc', email: 'not-an-email', country: 'x', alt_email: 'nope' });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        contact_type_id: ['The contact type id must be an integer.'],
        email: ['The email must be a valid email address.'],
        country: ['The country must be an integer.'],
        alt_email: ['The alt email must be a valid email address.'],
      }),
    );
  });

  it('reads query strings with the same parser', async () => {
    const id = await make.contact(t.a, { contact_type_id: typeId });
    const r = await t.a.request('GET', `/contacts/details?contact_id=%20${id}%20`);
    assert.equal(r.status, 200, r.text);
    const arr = await t.a.request('GET', `/contacts/details?contact_id[0]=${id}&contact_id[1]=${id}`);
    assert.equal(arr.status, 422, arr.text);
    assert.deepEqual(arr.body, fieldErrors({ contact_id: ['The contact id must be a string.'] }));
  });
});
