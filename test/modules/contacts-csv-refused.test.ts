import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, setup, type TestContext, MISSING_KEYS } from '../helpers.js';
import { contactsOf, imported, multipart, upload } from './contacts-csv.helpers.js';

describe('contacts CSV import: refused requests and files, and the sample', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('rejects a file without an email or country column, an empty file and a header-less file', async () => {
    const type = await make.contactType(t.a);
    const noEmail = await upload(t.a, type, 'first_name,country\nAda,101\n');
    assert.equal(noEmail.status, 422);
    assert.deepEqual(noEmail.body, fieldErrors({ file: ['The file is missing the required column: email.'] }));
    const headerless = await upload(t.a, type, 'ada@example.com,101\n');
    assert.deepEqual(headerless.body, fieldErrors({ file: ['The file is missing the required columns: email, country.'] }));
    const empty = await upload(t.a, type, '');
    assert.deepEqual(empty.body, fieldErrors({ file: ['The file is empty.'] }));
    const bomOnly = await upload(t.a, type, '\uFEFF\r\n');
    assert.deepEqual(bomOnly.body, fieldErrors({ file: ['The file is empty.'] }));
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it('rejects a file without the csv extension, a missing file and a missing contact type together', async () => {
    const type = await make.contactType(t.a);
    const txt = await upload(t.a, type, 'email,country\nx@example.com,101\n', { name: 'contacts.txt' });
    assert.equal(txt.status, 422);
    assert.deepEqual(txt.body, fieldErrors({ file: ['The file must be a file of type: csv.'] }));
    const none = await upload(t.a, undefined);
    assert.deepEqual(
      none.body,
      fieldErrors({ contact_type_id: ['The contact type id field is required.'], file: ['The file field is required.'] }),
    );
    const form = await t.a.post('/contacts/upload-csv', { contact_type_id: 'abc' });
    assert.deepEqual(
      form.body,
      fieldErrors({ contact_type_id: ['The contact type id must be an integer.'], file: ['The file field is required.'] }),
    );
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it("rejects an unknown, deleted or other account's contact type and imports nothing", async () => {
    const foreign = await make.contactType(t.b);
    const csv = 'email,country\nnope@example.com,101\n';
    for (const id of [foreign, 999999, 0, '99999999999']) {
      const r = await upload(t.a, id, csv);
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
    }
    const deleted = await make.contactType(t.a);
    await t.a.delete('/contacts-type/delete', { contact_type_id: deleted });
    assert.deepEqual(
      (await upload(t.a, deleted, csv)).body,
      fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }),
    );
    assert.equal((await contactsOf(t.b, foreign)).size, 0);
    assert.equal((await contactsOf(t.a, foreign)).size, 0);
  });

  it('rejects a file with NUL characters (a UTF-16 file, say) with 422 and stores nothing', async () => {
    const type = await make.contactType(t.a);
    const message = fieldErrors({ file: ['The file is not a valid CSV file: it holds NUL characters; save it as UTF-8 text.'] });
    const nul = await upload(t.a, type, 'email,country,first_name\nok@example.com,101,fine\nnul@example.com,101,a\u0000b\n');
    assert.equal(nul.status, 422);
    assert.deepEqual(nul.body, message);
    const utf16 = await upload(t.a, type, Buffer.from('\uFEFFemail,country\r\nx@example.com,101\r\n', 'utf16le'));
    assert.equal(utf16.status, 422);
    assert.deepEqual(utf16.body, message);
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it('rejects malformed CSV with 422 and stores nothing, even after earlier batches were written', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email,country\n';
    for (let i = 0; i < 2500; i++) csv += `m${i}@example.com,101\n`;
    csv += '"unclosed@example.com,101\n';
    const r = await upload(t.a, type, csv);
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, fieldErrors({ file: ['The file is not a valid CSV file: a quoted value is never closed (row 2502).'] }));
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it('answers 400 to a broken multipart body and 422 to two files, never 500', async () => {
    const type = await make.contactType(t.a);
    const noBoundary = await t.a.request('POST', '/contacts/upload-csv', {
      payload: 'garbage',
      headers: { 'content-type': 'multipart/form-data' },
    });
    assert.equal(noBoundary.status, 400);
    assert.deepEqual(noBoundary.body, { status: 'failed', errors: 'The multipart body is malformed.' });
    const cut = `--xyz\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type}\r\n--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail,country\r\ncut@example.com,101\r\n`;
    const truncated = await t.a.request('POST', '/contacts/upload-csv', {
      payload: cut,
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    assert.equal(truncated.status, 400);
    const file = (name: string) =>
      `--xyz\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\nemail,country\r\n${name}@example.com,101\r\n`;
    const two = `--xyz\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type}\r\n${file('one.csv')}${file('two.csv')}--xyz--\r\n`;
    const twoFiles = await t.a.request('POST', '/contacts/upload-csv', {
      payload: two,
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    assert.equal(twoFiles.status, 422);
    assert.deepEqual(twoFiles.body, fieldErrors({ file: ['Only one file may be uploaded.'] }));
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it('answers 401 without the key headers', async () => {
    const r = await t.anon.request('POST', '/contacts/upload-csv', multipart({ contact_type_id: 1 }, { content: 'email,country\n' }));
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, MISSING_KEYS);
    const s = await t.anon.get('/contacts/csv-sample/download');
    assert.equal(s.status, 401);
  });

  it('downloads a sample with every importable column, custom fields included, that imports back', async () => {
    for (const [field_name, field_type] of [
      ['member_since', 'datetime-local'],
      ['loyalty_points', 'number'],
    ]) {
      assert.equal((await t.a.post('/custom-fields/save', { field_name, field_type })).status, 200);
    }
    const r = await t.a.get('/contacts/csv-sample/download');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(r.headers['content-disposition']), /^attachment; filename="[\w-]+\.csv"$/);
    const lines = r.text
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    assert.equal(lines.length, 3);
    const header = lines[0].split(',');
    assert.deepEqual(header.slice(0, 17), [
      'first_name',
      'last_name',
      'email',
      'alt_email',
      'country',
      'state',
      'city',
      'address_line1',
      'address_line2',
      'state_province_region',
      'postal_code',
      'father_name',
      'designation',
      'company_name',
      'age',
      'birth_date',
      'join_date',
    ]);
    assert.ok(header.includes('member_since'));
    assert.ok(header.includes('loyalty_points'));
    const other = await t.b.get('/contacts/csv-sample/download');
    assert.ok(!other.text.includes('member_since'));
    const type = await make.contactType(t.a);
    const back = await upload(t.a, type, r.text);
    assert.deepEqual(back.body, imported(2, 0, 0));
  });
});

describe('contacts CSV import size limit', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ maxCsvBytes: 2048 });
  });
  after(() => t.close());

  it('answers 413 for a file over MAX_CSV_MB and stores nothing', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email,country\n';
    for (let i = 0; csv.length < 4096; i++) csv += `big${i}@example.com,101\n`;
    const r = await upload(t.a, type, csv);
    assert.equal(r.status, 413);
    assert.deepEqual(r.body, { status: 'failed', errors: 'The file must not be greater than 2 kilobytes.' });
    const list = await t.a.get('/contacts/list');
    assert.equal(list.body.message.contacts.length, 0);
    const small = await upload(t.a, type, 'email,country\nsmall@example.com,101\n');
    assert.deepEqual(small.body, imported(1, 0, 0));
  });
});
