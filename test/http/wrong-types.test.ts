import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, type Client } from '../helpers.js';
import { group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { automationBase, automationForm, createAutomation, scheduleForm } from '../modules/automations.helpers.js';
import { multipart } from '../modules/contacts-csv.helpers.js';

/** Values of the wrong type, as a form sends them (`x[a]=1`, `x[0]=…&x[1]=…`) or as JSON does. */
const NOT_TEXT: Array<[string, unknown]> = [
  ['an object', { a: '1' }],
  ['an array', ['a', 'b']],
  ['a nested array', [['a']]],
];
const NOT_TEXT_JSON: Array<[string, unknown]> = [
  ['an empty object', {}],
  ['an array', [1, 2]],
  ['a nested array', [[1]]],
];
const NOT_INTEGER = ['Infinity', '-Infinity', '1e999', '+03:00', '1.5'];

/** Sends `body` to `path` as a form and as JSON, expecting exactly `errors` both times. */
async function expectErrors(c: Client, path: string, form: Record<string, unknown>, errors: Record<string, string[]>, what: string) {
  const f = await c.post(path, form);
  assert.equal(f.status, 422, `${what} (form): ${f.text}`);
  assert.deepEqual(f.body, fieldErrors(errors), `${what} (form)`);
}

async function expectErrorsJson(c: Client, path: string, json: Record<string, unknown>, errors: Record<string, string[]>, what: string) {
  const j = await c.request('POST', path, { json });
  assert.equal(j.status, 422, `${what} (JSON): ${j.text}`);
  assert.deepEqual(j.body, fieldErrors(errors), `${what} (JSON)`);
}

describe('wrong types: 422 with the field message, never a 500, on both engines', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  before(async () => {
    t = await setupSends();
    const { type } = await typeWith(t.a, [['ada@example.com']]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
  });
  after(() => t.close());

  it('answers page and per_page of Infinity, 1e999, 1.5 or +03:00 on every list with "must be an integer"', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const lists: Array<[string, string]> = [];
    for (const [path, ops] of Object.entries<Record<string, { parameters?: Array<{ name: string }> }>>(doc.paths))
      for (const [method, op] of Object.entries(ops))
        if (op.parameters?.some((p) => p.name === 'page')) lists.push([method.toUpperCase(), path]);
    assert.ok(lists.length >= 12, `${lists.length} lists`);
    for (const [method, path] of lists) {
      for (const name of ['page', 'per_page']) {
        for (const value of NOT_INTEGER) {
          const r = await t.a.request(method, path, { query: { [name]: value } });
          assert.equal(r.status, 422, `${method} ${path}?${name}=${value}: ${r.text}`);
          assert.deepEqual(
            r.body,
            fieldErrors({ [name]: [`The ${name.replace('_', ' ')} must be an integer.`] }),
            `${path} ${name}=${value}`,
          );
        }
      }
      const huge = await t.a.request(method, path, { query: { page: '1e308' } });
      assert.deepEqual(huge.body, fieldErrors({ page: ['The page must not be greater than 1000000000.'] }), `${path} page=1e308`);
    }
  });

  describe('single sends: the design and schedule fields must be text', () => {
    const FIELDS: Array<[string, Record<string, unknown>]> = [
      ['template_html', {}],
      ['template_json', { template_html: undefined }],
      ['schedule_date', { schedule_type: 1, schedule_time: '10:00' }],
      ['schedule_time', { schedule_type: 1, schedule_date: '2031-01-01' }],
      ['timezone', {}],
    ];
    for (const [field, around] of FIELDS) {
      it(`create and update answer ${field} given as an object or array with "must be a string"`, async () => {
        const errors = { [field]: [`The ${field.replace('_', ' ')} must be a string.`] };
        const utr = (await t.a.post('/single/send/create', sendForm(base))).body.message.utr as string;
        for (const [what, value] of NOT_TEXT) {
          await expectErrors(t.a, '/single/send/create', sendForm(base, { ...around, [field]: value }), errors, `create ${field} ${what}`);
          await expectErrors(
            t.a,
            '/single/send/update',
            sendForm(base, { ...around, utr, [field]: value }),
            errors,
            `update ${field} ${what}`,
          );
        }
        for (const [what, value] of NOT_TEXT_JSON) {
          const json = { ...sendForm(base, around), [field]: value };
          await expectErrorsJson(t.a, '/single/send/create', json, errors, `create ${field} ${what}`);
          await expectErrorsJson(t.a, '/single/send/update', { ...json, utr }, errors, `update ${field} ${what}`);
        }
      });
    }

    it('answers unsubscribe_group_id and sender_id of Infinity with "must be an integer" (PostgreSQL never sees it)', async () => {
      for (const field of ['unsubscribe_group_id', 'sender_id', 'template_id']) {
        for (const value of ['Infinity', '1e999']) {
          const errors = { [field]: [`The ${field.replace(/_/g, ' ')} must be an integer.`] };
          await expectErrors(t.a, '/single/send/create', sendForm(base, { [field]: value }), errors, `${field}=${value}`);
        }
      }
    });
  });

  it('automation emails: template_html and template_json given as an object or array are "must be a string"', async () => {
    const autoBase = await automationBase(t, t.a);
    const utr = await createAutomation(t.a, automationForm(autoBase));
    for (const field of ['template_html', 'template_json']) {
      const errors = { [field]: [`The ${field.replace('_', ' ')} must be a string.`] };
      const around = { template_html: undefined };
      for (const [what, value] of NOT_TEXT) {
        await expectErrors(
          t.a,
          '/automations/schedule/create',
          scheduleForm(autoBase, utr, { ...around, [field]: value }),
          errors,
          `${field} ${what}`,
        );
      }
      for (const [what, value] of NOT_TEXT_JSON) {
        const json = { ...scheduleForm(autoBase, utr, around), [field]: value };
        await expectErrorsJson(t.a, '/automations/schedule/create', json, errors, `${field} ${what}`);
      }
    }
    const period = await t.a.post('/automations/schedule/create', scheduleForm(autoBase, utr, { waiting_period: 'Infinity' }));
    assert.deepEqual(period.body, fieldErrors({ waiting_period: ['The waiting period must be an integer.'] }));
  });

  describe('contacts update: contact_id', () => {
    const form = (contact_id: unknown) => ({ contact_id, contact_type_id: base.type, email: 'nobody@example.com', country: 101 });

    it('answers an object, an array, Infinity, +03:00 or 1.5 with "must be an integer", nothing changed', async () => {
      const errors = { contact_id: ['The contact id must be an integer.'] };
      for (const value of [{ a: '1' }, ['1', '2'], [['1']], ...NOT_INTEGER]) {
        await expectErrors(t.a, '/contacts/update', form(value), errors, `contact_id=${JSON.stringify(value)}`);
      }
      for (const value of [{}, [1, 2], [[1]], '+03:00', 1.5]) {
        await expectErrorsJson(t.a, '/contacts/update', form(value), errors, `contact_id=${JSON.stringify(value)}`);
      }
    });

    it('answers an integer out of range (1e308, 2147483648) with 404 Record Not Found', async () => {
      for (const value of ['1e308', '2147483648', '99999999999999999999']) {
        const r = await t.a.post('/contacts/update', form(value));
        assert.equal(r.status, 404, `${value}: ${r.text}`);
        assert.deepEqual(r.body, { status: 'failed', errors: 'Record Not Found' });
      }
      const r = await t.a.request('POST', '/contacts/update', { json: form(1e308) });
      assert.equal(r.status, 404, r.text);
    });

    it('answers a contact type id or country of Infinity with "must be an integer"', async () => {
      const id = await make.contact(t.a, { contact_type_id: base.type });
      for (const field of ['contact_type_id', 'country']) {
        const errors = { [field]: [`The ${field.replace(/_/g, ' ')} must be an integer.`] };
        await expectErrors(t.a, '/contacts/update', { ...form(id), email: 'new@example.com', [field]: 'Infinity' }, errors, field);
        await expectErrors(t.a, '/contacts/add', { ...form(undefined), email: 'new@example.com', [field]: 'Infinity' }, errors, field);
      }
    });
  });

  describe('CSV upload: contact_type_id', () => {
    const CSV = 'email,country\nimport@example.com,101\n';
    const integer = { contact_type_id: ['The contact type id must be an integer.'] };

    it('answers it sent as an object or array of multipart fields with "must be an integer"', async () => {
      const bodies: Array<Record<string, string>> = [
        { 'contact_type_id[x]': String(base.type) },
        { 'contact_type_id[0]': String(base.type), 'contact_type_id[1]': String(base.type) },
        { 'contact_type_id[0][0]': String(base.type) },
        { contact_type_id: 'Infinity' },
        { contact_type_id: '+03:00' },
        { contact_type_id: '1.5' },
      ];
      for (const fields of bodies) {
        const r = await t.a.request('POST', '/contacts/upload-csv', multipart(fields, { content: CSV }));
        assert.equal(r.status, 422, `${JSON.stringify(fields)}: ${r.text}`);
        assert.deepEqual(r.body, fieldErrors(integer), JSON.stringify(fields));
      }
    });

    it('answers it sent as an object or array in a urlencoded or JSON body with "must be an integer"', async () => {
      const errors = { ...integer, file: ['The file field is required.'] };
      for (const [, value] of NOT_TEXT) await expectErrors(t.a, '/contacts/upload-csv', { contact_type_id: value }, errors, 'form');
      for (const [, value] of NOT_TEXT_JSON)
        await expectErrorsJson(t.a, '/contacts/upload-csv', { contact_type_id: value }, errors, 'JSON');
    });

    it('still imports with a valid one, and answers an out-of-range one as invalid', async () => {
      const ok = await t.a.request('POST', '/contacts/upload-csv', multipart({ contact_type_id: base.type }, { content: CSV }));
      assert.equal(ok.status, 200, ok.text);
      for (const value of ['2147483648', '1e308', '0']) {
        const r = await t.a.request('POST', '/contacts/upload-csv', multipart({ contact_type_id: value }, { content: CSV }));
        assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }), value);
      }
    });
  });
});
