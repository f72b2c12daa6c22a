import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ENGINE, fieldErrors, make, setup, type Client, type TestContext, MISSING_KEYS } from '../helpers.js';

/** A multipart body built by hand: fields and an optional file part, the file first or last. */
function multipart(fields: Record<string, string | number>, file?: { content: string | Buffer; name?: string; field?: string }, fileFirst = false) {
  const boundary = '----csv' + randomBytes(8).toString('hex');
  const parts: Buffer[] = [];
  const fieldParts = Object.entries(fields).map(([k, v]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  const fileParts = file
    ? [
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name ?? 'contacts.csv'}"\r\nContent-Type: text/csv\r\n\r\n`),
        Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
        Buffer.from('\r\n'),
      ]
    : [];
  parts.push(...(fileFirst ? [...fileParts, ...fieldParts] : [...fieldParts, ...fileParts]), Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

function upload(c: Client, contactTypeId: number | string | undefined, csv?: string | Buffer, opts: { name?: string; fileFirst?: boolean } = {}) {
  const fields: Record<string, string | number> = contactTypeId === undefined ? {} : { contact_type_id: contactTypeId };
  const body = multipart(fields, csv === undefined ? undefined : { content: csv, name: opts.name }, opts.fileFirst);
  return c.request('POST', '/contacts/upload-csv', body);
}

/** The account's live contacts of one type, by lower-cased email. */
async function contactsOf(c: Client, typeId: number): Promise<Map<string, any>> {
  const r = await c.get('/contacts/list');
  assert.equal(r.status, 200);
  const list = r.body.message.contacts.filter((x: { contact_type_id: number }) => x.contact_type_id === typeId);
  return new Map(list.map((x: { email: string }) => [x.email.toLowerCase(), x]));
}

async function details(c: Client, id: number) {
  return (await c.get('/contacts/details', { contact_id: id })).body.message.contact;
}

const imported = (created: number, updated: number, skipped: number, errors: unknown[] = []) => ({
  status: 'success',
  message: 'Imported Successfully',
  summary: { created, updated, skipped, errors },
});

describe('contacts CSV import and sample', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('imports new contacts with standard fields, the reserved extras and custom fields', async () => {
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'loyalty_points', field_type: 'number' })).status, 200);
    const type = await make.contactType(t.a);
    const csv =
      'first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code,father_name,designation,company_name,age,birth_date,join_date,loyalty_points\n' +
      'Ada,Lovelace,ada@example.com,ada@alt.example.org,101,Maharashtra,Mumbai,12 Marine Drive,Colaba,MH,400005,George,Engineer,Engines Ltd,36,1988-12-10T09:00,2021-03-15T09:30:00,120\n' +
      'Grace,Hopper,grace@example.com,,US,,,,,,,,,,,,,\n';
    const r = await upload(t.a, type, csv);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, imported(2, 0, 0));
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.size, 2);
    const ada = await details(t.a, contacts.get('ada@example.com').id);
    assert.equal(ada.first_name, 'Ada');
    assert.equal(ada.last_name, 'Lovelace');
    assert.equal(ada.alt_email, 'ada@alt.example.org');
    assert.equal(ada.country, '101');
    assert.equal(ada.state, 'Maharashtra');
    assert.equal(ada.city, 'Mumbai');
    assert.equal(ada.address_line1, '12 Marine Drive');
    assert.equal(ada.address_line2, 'Colaba');
    assert.equal(ada.state_province_region, 'MH');
    assert.equal(ada.postal_code, '400005');
    assert.deepEqual(ada.custom_field, {
      father_name: { field_name: 'Father Name', field_value: 'George' },
      designation: { field_name: 'Designation', field_value: 'Engineer' },
      company_name: { field_name: 'Company Name', field_value: 'Engines Ltd' },
      age: { field_name: 'Age', field_value: '36' },
      birth_date: { field_name: 'Birth Date', field_value: '1988-12-10T09:00' },
      join_date: { field_name: 'Join Date', field_value: '2021-03-15T09:30:00' },
      loyalty_points: { field_name: 'Loyalty Points', field_value: '120' },
    });
    const grace = await details(t.a, contacts.get('grace@example.com').id);
    assert.equal(grace.country, '233');
    assert.equal(grace.alt_email, null);
    assert.equal(grace.state, null);
    assert.equal(grace.custom_field, null);
  });

  it('accepts a UTF-8 BOM, CRLF line ends and header names in any case', async () => {
    const type = await make.contactType(t.a);
    const csv = '\uFEFFEmail,COUNTRY,First Name\r\nzoe@example.com,India,Zoë\r\nyan@example.com,in,Yan\r\n';
    const r = await upload(t.a, type, csv);
    assert.deepEqual(r.body, imported(2, 0, 0));
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.get('zoe@example.com').first_name, 'Zoë');
    assert.equal(contacts.get('yan@example.com').first_name, 'Yan');
  });

  it('detects semicolon and tab delimiters from the header line', async () => {
    const semi = await make.contactType(t.a);
    const r1 = await upload(t.a, semi, 'email;country;city\nsemi@example.com;101;Pune, West\n');
    assert.deepEqual(r1.body, imported(1, 0, 0));
    assert.equal((await contactsOf(t.a, semi)).get('semi@example.com').city, 'Pune, West');
    const tab = await make.contactType(t.a);
    const r2 = await upload(t.a, tab, 'email\tcountry\tcity\ntab@example.com\t101\tSan Jose; CA\n');
    assert.deepEqual(r2.body, imported(1, 0, 0));
    assert.equal((await contactsOf(t.a, tab)).get('tab@example.com').city, 'San Jose; CA');
  });

  it('reads RFC 4180 quoting: commas, doubled quotes and line breaks inside values', async () => {
    const type = await make.contactType(t.a);
    const csv = 'email,country,address_line1,company_name,city\n"q@example.com",101,"1 Main St, Apt ""B""","Line one\r\nLine two",Delhi\nafter@example.com,101,,,Agra\n';
    const r = await upload(t.a, type, csv);
    assert.deepEqual(r.body, imported(2, 0, 0));
    const contacts = await contactsOf(t.a, type);
    const q = contacts.get('q@example.com');
    assert.equal(q.address_line1, '1 Main St, Apt "B"');
    assert.equal(q.custom_field.company_name.field_value, 'Line one\r\nLine two');
    assert.equal(q.city, 'Delhi');
    assert.equal(contacts.get('after@example.com').city, 'Agra');
  });

  it('takes the country as an id, a name or an ISO-2 code; skips and reports a missing or unknown one', async () => {
    const type = await make.contactType(t.a);
    const csv = 'email,country\nid@example.com,101\nname@example.com,germany\niso@example.com,FR\nnone@example.com,\nbad@example.com,Atlantis\n';
    const r = await upload(t.a, type, csv);
    assert.deepEqual(
      r.body,
      imported(3, 0, 2, [
        { row: 5, field: 'country', message: 'The country field is required.' },
        { row: 6, field: 'country', message: 'The selected country is invalid.' },
      ]),
    );
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.get('id@example.com').country, 'India');
    assert.equal(contacts.get('name@example.com').country, 'Germany');
    assert.equal(contacts.get('iso@example.com').country, 'France');
    assert.equal(contacts.has('none@example.com'), false);
  });

  it('skips and reports rows with a missing or invalid email and values that do not fit their type', async () => {
    const type = await make.contactType(t.a);
    const csv = 'email,country,age,join_date,alt_email\n,101,,,\nnot-an-email,101,,,\nok@example.com,101,30,2024-01-02T03:04,\nage@example.com,101,thirty,2024-02-30T10:00,\nalt@example.com,101,,,nope\n';
    const r = await upload(t.a, type, csv);
    assert.deepEqual(
      r.body,
      imported(1, 0, 4, [
        { row: 2, field: 'email', message: 'The email field is required.' },
        { row: 3, field: 'email', message: 'The email must be a valid email address.' },
        { row: 5, field: 'age', message: 'The age must be a number.' },
        { row: 5, field: 'join_date', message: 'The join date is not a valid date.' },
        { row: 6, field: 'alt_email', message: 'The alt email must be a valid email address.' },
      ]),
    );
    assert.deepEqual([...(await contactsOf(t.a, type)).keys()], ['ok@example.com']);
  });

  it('ignores blank lines and reports unknown columns once, on row 1', async () => {
    const type = await make.contactType(t.a);
    const r = await upload(t.a, type, 'email,country,favourite_colour\n\nblank@example.com,101,blue\n,,\n');
    assert.deepEqual(r.body, imported(1, 0, 0, [{ row: 1, field: 'favourite_colour', message: 'The column favourite_colour is not a field; its values were ignored.' }]));
  });

  it('updates the contact with the same email case-insensitively, keeping what the file leaves empty', async () => {
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'tier', field_type: 'text' })).status, 200);
    const type = await make.contactType(t.a);
    const id = await make.contact(t.a, { contact_type_id: type, email: 'Up.Date@Example.com', first_name: 'Old', last_name: 'Name', city: 'Oldtown', custom_field: { tier: 'gold' }, company_name: 'Keep Co' });
    const r = await upload(t.a, type, 'email,country,first_name,city,designation\nup.date@example.COM,FR,New,,Chief\nfresh@example.com,101,Fresh,,\n');
    assert.deepEqual(r.body, imported(1, 1, 0));
    const c = await details(t.a, id);
    assert.equal(c.email, 'up.date@example.COM');
    assert.equal(c.first_name, 'New');
    assert.equal(c.last_name, 'Name');
    assert.equal(c.city, 'Oldtown');
    assert.equal(c.country, '75');
    assert.equal(c.custom_field.tier.field_value, 'gold');
    assert.equal(c.custom_field.company_name.field_value, 'Keep Co');
    assert.equal(c.custom_field.designation.field_value, 'Chief');
    assert.equal((await contactsOf(t.a, type)).size, 2);
  });

  it('lets the later of two rows with one email win, within a batch and across batches', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email,country,first_name,city\ndup@example.com,101,First,Pune\nDUP@example.com,101,Second,\n';
    for (let i = 0; i < 2100; i++) csv += `bulk${i}@example.com,101,B${i},\n`;
    csv += 'bulk5@example.com,101,Late,Goa\n';
    const r = await upload(t.a, type, csv);
    assert.deepEqual(r.body, imported(2101, 2, 0));
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.size, 2101);
    assert.equal(contacts.get('dup@example.com').first_name, 'Second');
    assert.equal(contacts.get('dup@example.com').city, 'Pune');
    assert.equal(contacts.get('bulk5@example.com').first_name, 'Late');
    assert.equal(contacts.get('bulk5@example.com').city, 'Goa');
  });

  it('imports a file over 1 MiB (parsed in a worker thread) with the same rules, and rolls back a malformed one', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email;country;first_name;company_name\n';
    for (let i = 0; i < 40_000; i++) csv += `big${i}@example.com;${i % 2 ? 'IN' : '101'};"Name; ${i}";Company ${i}\n`;
    csv += 'big7@example.com;FR;Again;\nbroken;101;x;y\n';
    assert.ok(csv.length > 1024 * 1024);
    const r = await upload(t.a, type, csv);
    assert.deepEqual(r.body, imported(40_000, 1, 1, [{ row: 40_003, field: 'email', message: 'The email must be a valid email address.' }]));
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.size, 40_000);
    if (ENGINE === 'postgres') {
      // A large import refreshes the planner's statistics (in the background, after the answer).
      let analyzed = false;
      for (let i = 0; i < 50 && !analyzed; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_user_tables where relname = 'contacts' and last_analyze is not null`.execute(t.database.db);
        analyzed = rows[0].n === 1;
        if (!analyzed) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(analyzed, 'contacts analyzed after a 40,000-row import');
    }
    assert.equal(contacts.get('big7@example.com').first_name, 'Again');
    assert.equal(contacts.get('big7@example.com').country, 'France');
    assert.equal(contacts.get('big7@example.com').custom_field.company_name.field_value, 'Company 7');
    assert.equal(contacts.get('big8@example.com').first_name, 'Name; 8');

    const other = await make.contactType(t.a);
    const bad = await upload(t.a, other, csv + '"open;101;x;y\nmore@example.com;101;a;b\n');
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, fieldErrors({ file: ['The file is not a valid CSV file: a quoted value is never closed (row 40004).'] }));
    assert.equal((await contactsOf(t.a, other)).size, 0);
  });

  it('lists at most the first 100 errors while counting every skipped row', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email,country\n';
    for (let i = 0; i < 150; i++) csv += `bad${i},101\n`;
    const r = await upload(t.a, type, csv);
    assert.equal(r.body.summary.skipped, 150);
    assert.equal(r.body.summary.errors.length, 100);
    assert.deepEqual(r.body.summary.errors[99], { row: 101, field: 'email', message: 'The email must be a valid email address.' });
  });

  it('accepts the file part before contact_type_id', async () => {
    const type = await make.contactType(t.a);
    const r = await upload(t.a, type, 'email,country\nfirst@example.com,101\n', { fileFirst: true });
    assert.deepEqual(r.body, imported(1, 0, 0));
  });

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
    assert.deepEqual(none.body, fieldErrors({ contact_type_id: ['The contact type id field is required.'], file: ['The file field is required.'] }));
    const form = await t.a.post('/contacts/upload-csv', { contact_type_id: 'abc' });
    assert.deepEqual(form.body, fieldErrors({ contact_type_id: ['The contact type id must be an integer.'], file: ['The file field is required.'] }));
    assert.equal((await contactsOf(t.a, type)).size, 0);
  });

  it('rejects an unknown, deleted or other account\'s contact type and imports nothing', async () => {
    const foreign = await make.contactType(t.b);
    const csv = 'email,country\nnope@example.com,101\n';
    for (const id of [foreign, 999999, 0, '99999999999']) {
      const r = await upload(t.a, id, csv);
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
    }
    const deleted = await make.contactType(t.a);
    await t.a.delete('/contacts-type/delete', { contact_type_id: deleted });
    assert.deepEqual((await upload(t.a, deleted, csv)).body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
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
    const noBoundary = await t.a.request('POST', '/contacts/upload-csv', { payload: 'garbage', headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(noBoundary.status, 400);
    assert.deepEqual(noBoundary.body, { status: 'failed', errors: 'The multipart body is malformed.' });
    const cut = `--xyz\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type}\r\n--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail,country\r\ncut@example.com,101\r\n`;
    const truncated = await t.a.request('POST', '/contacts/upload-csv', { payload: cut, headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
    assert.equal(truncated.status, 400);
    const file = (name: string) => `--xyz\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\nemail,country\r\n${name}@example.com,101\r\n`;
    const two = `--xyz\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type}\r\n${file('one.csv')}${file('two.csv')}--xyz--\r\n`;
    const twoFiles = await t.a.request('POST', '/contacts/upload-csv', { payload: two, headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
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
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'member_since', field_type: 'datetime-local' })).status, 200);
    const r = await t.a.get('/contacts/csv-sample/download');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(r.headers['content-disposition']), /^attachment; filename="[\w-]+\.csv"$/);
    const lines = r.text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    assert.equal(lines.length, 3);
    const header = lines[0].split(',');
    assert.deepEqual(header.slice(0, 17), [
      'first_name', 'last_name', 'email', 'alt_email', 'country', 'state', 'city', 'address_line1', 'address_line2',
      'state_province_region', 'postal_code', 'father_name', 'designation', 'company_name', 'age', 'birth_date', 'join_date',
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
