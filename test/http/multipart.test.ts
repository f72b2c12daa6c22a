import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { make, setup, type TestContext } from '../helpers.js';

const MALFORMED = { status: 'failed', errors: 'The multipart body is malformed.' };

/** One well-formed field part, then whatever `tail` says, under `boundary` `x`. */
const field = (name: string, value: string) => `--x\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

/** Broken multipart bodies: [what, content type, body]. */
const BROKEN: Array<[string, string, string]> = [
  ['no boundary parameter', 'multipart/form-data', field('name', 'v') + '--x--\r\n'],
  ['an empty boundary', 'multipart/form-data; boundary=', '--\r\n\r\n'],
  [
    'a boundary over 70 characters that busboy cannot search for',
    `multipart/form-data; boundary=${'b'.repeat(300)}`,
    `--${'b'.repeat(300)}\r\n`,
  ],
  ['a boundary that is not the one in the body', 'multipart/form-data; boundary=other', field('name', 'v') + '--x--\r\n'],
  ['a body cut off inside a part', 'multipart/form-data; boundary=x', field('name', 'v').slice(0, -4)],
  ['a body cut off inside the part headers', 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-da'],
  ['junk bytes', 'multipart/form-data; boundary=x', '\u0000\u0001\u00ffjunk'],
  [
    'an invalid JSON field',
    'multipart/form-data; boundary=x',
    '--x\r\nContent-Disposition: form-data; name="name"\r\nContent-Type: application/json\r\n\r\n{bad\r\n--x--\r\n',
  ],
];

describe('malformed multipart bodies', () => {
  let t: TestContext;
  let typeId: number;
  before(async () => {
    t = await setup();
    typeId = await make.contactType(t.a, 'Multipart');
  });
  after(() => t.close());

  for (const path of ['/contacts-type/add', '/contacts/add', '/contacts/upload-csv']) {
    it(`answers 400 in the envelope on ${path}`, async () => {
      for (const [what, type, payload] of BROKEN) {
        const r = await t.a.request('POST', path, { payload, headers: { 'content-type': type } });
        assert.equal(r.status, 400, `${what}: ${r.text}`);
        assert.deepEqual(r.body, MALFORMED, what);
      }
    });
  }

  it('refuses a part named like an Object member with its own 400 text', async () => {
    for (const name of ['toString', 'constructor', '__proto__']) {
      const r = await t.a.request('POST', '/contacts-type/add', {
        payload: field(name, 'x') + field('name', 'Reserved') + '--x--\r\n',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
      });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.match(r.body.errors, /^A multipart field may not be named like a member of every object/);
    }
  });

  it('ignores parts it cannot name (no or broken Content-Disposition): their fields are missing', async () => {
    const payload = '--x\r\nGarbage header line\r\n\r\nv\r\n--x\r\nContent-Type: text/plain\r\n\r\nw\r\n--x--\r\n';
    const r = await t.a.request('POST', '/contacts-type/add', { payload, headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body, { status: 'failed', errors: { name: ['The name field is required.'] } });
  });

  it('stores nothing from a broken CSV upload', async () => {
    const payload =
      field('contact_type_id', String(typeId)) +
      '--x\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\n\r\nemail\nz@example.com\n';
    const r = await t.a.request('POST', '/contacts/upload-csv', {
      payload,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    assert.deepEqual([r.status, r.body], [400, MALFORMED]);
    const rows = await t.database.db.selectFrom('contacts').select('id').where('email', '=', 'z@example.com').execute();
    assert.deepEqual(rows, []);
  });

  it('still reads a well-formed multipart body after broken ones', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', {
      payload: field('name', 'After the broken ones') + '--x--\r\n',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    assert.equal(r.status, 200, r.text);
  });
});
