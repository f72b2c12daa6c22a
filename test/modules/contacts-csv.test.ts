import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINE, fieldErrors, make, setup, type TestContext } from '../helpers.js';
import { contactsOf, details, imported, upload } from './contacts-csv.helpers.js';

describe('contacts CSV import', () => {
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
    const csv =
      'email,country,address_line1,company_name,city\n"q@example.com",101,"1 Main St, Apt ""B""","Line one\r\nLine two",Delhi\nafter@example.com,101,,,Agra\n';
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
    const csv =
      'email,country\nid@example.com,101\nname@example.com,germany\niso@example.com,FR\nnone@example.com,\nbad@example.com,Atlantis\n';
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
    const csv =
      'email,country,age,join_date,alt_email\n,101,,,\nnot-an-email,101,,,\nok@example.com,101,30,2024-01-02T03:04,\nage@example.com,101,thirty,2024-02-30T10:00,\nalt@example.com,101,,,nope\n';
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
    assert.deepEqual(
      r.body,
      imported(1, 0, 0, [
        { row: 1, field: 'favourite_colour', message: 'The column favourite_colour is not a field; its values were ignored.' },
      ]),
    );
  });

  it('updates the contact with the same email case-insensitively, keeping what the file leaves empty', async () => {
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'tier', field_type: 'text' })).status, 200);
    const type = await make.contactType(t.a);
    const id = await make.contact(t.a, {
      contact_type_id: type,
      email: 'Up.Date@Example.com',
      first_name: 'Old',
      last_name: 'Name',
      city: 'Oldtown',
      custom_field: { tier: 'gold' },
      company_name: 'Keep Co',
    });
    const r = await upload(
      t.a,
      type,
      'email,country,first_name,city,designation\nup.date@example.COM,FR,New,,Chief\nfresh@example.com,101,Fresh,,\n',
    );
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

  it('imports a file over 1 MiB (many batches) with the same rules, and rolls back a malformed one', async () => {
    const type = await make.contactType(t.a);
    let csv = 'email;country;first_name;company_name\n';
    for (let i = 0; i < 40_000; i++) csv += `big${i}@example.com;${i % 2 ? 'IN' : '101'};"Name; ${i}";Company ${i}\n`;
    csv += 'big7@example.com;FR;Again;\nbroken;101;x;y\n';
    assert.ok(csv.length > 1024 * 1024);
    const r = await upload(t.a, type, csv);
    assert.deepEqual(
      r.body,
      imported(40_000, 1, 1, [{ row: 40_003, field: 'email', message: 'The email must be a valid email address.' }]),
    );
    const contacts = await contactsOf(t.a, type);
    assert.equal(contacts.size, 40_000);
    if (ENGINE === 'postgres') {
      // A large import refreshes the planner's statistics (in the background, after the answer).
      let analyzed = false;
      for (let i = 0; i < 50 && !analyzed; i++) {
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_user_tables where relname = 'contacts' and last_analyze is not null`.execute(
          t.database.db,
        );
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
});
