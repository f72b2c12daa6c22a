/**
 * A fuzz derived from the OpenAPI document the app serves: for every operation and every field it
 * documents (query, body, path), the field is sent as each wrong type (an object, an array, a
 * nested array, Infinity, an overflowing number, 1e308, a float, `+03:00`, 10,000 characters), the
 * other required fields valid (ids of records of the account), urlencoded and JSON (multipart for
 * the CSV upload). No answer may be a 5xx, and every JSON answer is the envelope.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import qs from 'qs';
import { make, setup, type Client, type TestContext } from '../helpers.js';
import { keyClient } from '../modules/access/keys.helpers.js';
import { multipart } from '../modules/contacts-csv.helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { checkAnswer, describeRequest, type FuzzRequest } from './fuzz.requests.js';

interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  minimum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
}
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

/**
 * A wrong value: how a form writes it (pairs under the field's name, so `[x]` makes an object and
 * `[0]` an array) and how JSON does (raw JSON text: `1e999` only exists there as a literal).
 */
interface Wrong {
  name: string;
  form: (field: string) => Array<[string, string]>;
  json: string;
  /** Expressible as one path segment. */
  path?: string;
}
const LONG = 'x'.repeat(10_000);
const scalar = (v: string, json = JSON.stringify(v)): Wrong => ({
  name: v.length > 20 ? 'a long text' : v,
  form: (f) => [[f, v]],
  json,
  path: v,
});
const WRONG: Wrong[] = [
  { name: 'an object', form: (f) => [[`${f}[x]`, '1']], json: '{}' },
  { name: 'an object with a member', form: (f) => [[`${f}[x][y]`, '1']], json: '{"x":1}' },
  { name: 'an array', form: (f) => [[`${f}[0]`, '1']], json: '[1]' },
  {
    name: 'an array of two',
    form: (f) => [
      [`${f}[0]`, '1'],
      [`${f}[1]`, '2'],
    ],
    json: '[1,2]',
  },
  { name: 'a nested array', form: (f) => [[`${f}[0][0]`, '1']], json: '[[1]]' },
  scalar('Infinity'),
  scalar('-Infinity'),
  { ...scalar('1e999', '1e999'), name: 'an overflowing number' },
  scalar('1e308', '1e308'),
  scalar('1.5', '1.5'),
  scalar('+03:00'),
  scalar(LONG),
];

/** Routes with bodies or pages that are not the API (and not the subject here). */
const SKIPPED = /^\/(openapi\.json|docs|metrics|health\/)/;

const CSV = 'email,country\nfuzz.import@example.com,101\n';

let seq = 0;
const unique = () => `${++seq}${randomBytes(2).toString('hex')}`;

describe('fuzz: every documented field as every wrong type', () => {
  let t: TestContext;
  const logged: string[] = [];
  /** Valid values of the fields that name records, by field name (and path, for `id` and `utr`). */
  let ids: Record<string, unknown>;
  let fuzzKey: Client;
  let doc: { paths: Record<string, Record<string, Operation>> };

  before(async () => {
    t = await setup({}, { logger: { level: 'error', stream: { write: (line: string) => logged.push(line) } } });
    const { a } = t;
    const ok = async (p: Promise<{ status: number; text: string; body: any }>) => {
      const r = await p;
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    const type = await make.contactType(a);
    const contact = await make.contact(a, { contact_type_id: type });
    const field = (await ok(a.post('/custom-fields/save', { field_name: 'fuzz_motto', field_type: 'text' }))).id;
    const sender = (await ok(a.post('/sender/save', senderForm()))).id;
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', sender).execute();
    const group = (await ok(a.post('/unsubscribes-groups/save', { group_name: 'Fuzz', description: 'Fuzz', is_display: 1 }))).id;
    const groupRecipient = (
      await ok(a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: group, email_address: 'g@example.com' }))
    ).id;
    const global = (await ok(a.post('/global-unsubscribes/save', { email_address: 'global@example.com' }))).id;
    const notification = (await ok(a.post('/notification-recipient/save', { email_address: 'n@example.com', email_owner: 'N' }))).id;
    const segment = (await ok(a.post('/segment/create', { segment_name: 'Fuzz', contact_type_id: type }))).id;
    const segmentRecipient = (
      await ok(a.post('/segment/email/store', { segment_id: segment, first_name: 'S', last_name: 'R', email: 'sr@example.com' }))
    ).id;
    const html = '<html><body><p>Hi</p></body></html>';
    const send = {
      template_id: 1,
      template_html: html,
      sender_id: sender,
      unsubscribe_group_id: group,
      single_send_name: 'Fuzz',
      subject: 'Fuzz',
      preheader: 'Fuzz',
      recipient_id: [`contacts_${type}`],
      schedule_type: 1,
      schedule_date: '2099-01-01',
      schedule_time: '10:00',
    };
    const sendUtr = (await ok(a.post('/single/send/create', send))).message.utr;
    const automation = { type: 'welcome', automation_for: `contacts_${type}`, automation_name: 'Fuzz', unsubscribe_group_id: group };
    const automationUtr = (await ok(a.post('/automations/create', automation))).message.utr;
    const email = { utr: automationUtr, sender_id: sender, subject: 'Fuzz', waiting_period: 1, waiting_type: 'days', template_id: 1 };
    const emailUtr = (await ok(a.post('/automations/schedule/create', { ...email, preview_img: 'blank.png', template_html: html }))).utr;
    // A key of its own for the key routes to change and revoke (never the account's, which the fuzz uses).
    const key = (await ok(a.request('POST', '/keys/create', { json: { name: 'Fuzz', scopes: ['contacts.read'] } }))).message.id;
    fuzzKey = await keyClient(a, 'full', 'Fuzzer');
    ids = {
      contact_type_id: type,
      contact_id: contact,
      sender_id: sender,
      unsubscribe_group_id: group,
      unsubscribe_groups_id: group,
      groupId: group,
      segment_id: segment,
      segment_recipient_id: segmentRecipient,
      template_id: 1,
      country: 101,
      country_id: 101,
      recipient_id: [`contacts_${type}`],
      automation_for: `contacts_${type}`,
      preview_img: 'blank.png',
      is_display: 1,
      file: 'blank.png',
      // `id` and `utr` name a different record on each resource.
      'id /contacts-type': type,
      'id /keys': key,
      'id /custom-fields': field,
      'id /notification-recipient': notification,
      'id /global-unsubscribes': global,
      'id /unsubscribes-groups/recipients': groupRecipient,
      'id /unsubscribes-groups': group,
      'utr /single': sendUtr,
      'utr /automations/schedule/delete': emailUtr,
      'utr /automations': automationUtr,
      'utr /designs': emailUtr,
    };
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => t.close());

  /** A schema-valid value of a field: a record of the account for ids, else one built from the schema. */
  function validValue(path: string, name: string, schema: Schema): unknown {
    if (name in ids) return ids[name];
    const scoped = Object.keys(ids).find((k) => k.startsWith(`${name} /`) && path.startsWith(k.slice(name.length + 1)));
    if (scoped) return ids[scoped];
    const s = schema.anyOf?.[0] ?? schema;
    if (s.enum) return s.enum[0];
    if (s.format === 'email') return `fuzz.${unique()}@example.com`;
    if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1;
    if (s.type === 'array') return [validValue(path, name, s.items ?? {})];
    if (s.type === 'object') return {};
    if (s.type === 'boolean') return true;
    // Letters and digits fit every text pattern of the API (field names, header texts) and stay unique.
    return `fuzz_${unique()}`;
  }

  interface Target {
    method: string;
    path: string;
    query: Parameter[];
    pathParams: Parameter[];
    body?: { schema: Schema; types: string[] };
  }

  function targets(): Target[] {
    const out: Target[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (SKIPPED.test(path)) continue;
      for (const [method, op] of Object.entries(ops)) {
        const params = op.parameters ?? [];
        const content = op.requestBody?.content;
        out.push({
          method: method.toUpperCase(),
          path,
          query: params.filter((p) => p.in === 'query'),
          pathParams: params.filter((p) => p.in === 'path'),
          body: content ? { schema: Object.values(content)[0].schema, types: Object.keys(content) } : undefined,
        });
      }
    }
    // Deletes last, so that the records the other routes name still exist while they are fuzzed.
    const deletes = (x: Target) => x.method === 'DELETE' || /delete/.test(x.path);
    return [...out.filter((x) => !deletes(x)), ...out.filter(deletes)];
  }

  /** The URL with valid path parameters (or `wrong` in `field`) and query pairs. */
  function url(target: Target, pairs: Array<[string, string]>, wrongPath?: { field: string; value: string }): string {
    let path = target.path;
    for (const p of target.pathParams) {
      const value = wrongPath?.field === p.name ? wrongPath.value : String(validValue(target.path, p.name, p.schema));
      path = path.replace(`{${p.name}}`, encodeURIComponent(value));
    }
    const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return query ? `${path}?${query}` : path;
  }

  /** Query pairs: the ids the route names (valid), but for `field`, which is sent as `wrong`. */
  function queryPairs(target: Target, field?: string, wrong?: Wrong): Array<[string, string]> {
    const pairs: Array<[string, string]> = [];
    for (const p of target.query) {
      if (p.name === field) pairs.push(...wrong!.form(p.name));
      else if (p.name in ids || ['id', 'utr'].includes(p.name)) pairs.push([p.name, String(validValue(target.path, p.name, p.schema))]);
    }
    return pairs;
  }

  /** The required body fields, valid; `field` (required or not) left out for the caller to add. */
  function validBody(target: Target, field?: string): Record<string, unknown> {
    const { schema } = target.body!;
    const out: Record<string, unknown> = {};
    for (const [name, s] of Object.entries(schema.properties ?? {}))
      if (name !== field && schema.required?.includes(name)) out[name] = validValue(target.path, name, s);
    return out;
  }

  /** Every request of one target: each field as each wrong value, in each encoding the route reads. */
  function* requests(target: Target): Generator<{ label: string; request: FuzzRequest }> {
    const method = target.method;
    const label = (field: string, wrong: Wrong, how: string) => `${method} ${target.path} ${field} as ${wrong.name} (${how})`;
    for (const p of target.query)
      for (const wrong of WRONG)
        yield {
          label: label(p.name, wrong, 'query'),
          request: { method, url: url(target, queryPairs(target, p.name, wrong)), headers: {} },
        };
    for (const p of target.pathParams)
      for (const wrong of WRONG.filter((w) => w.path !== undefined)) {
        const request = { method, url: url(target, queryPairs(target), { field: p.name, value: wrong.path! }), headers: {} };
        yield { label: label(p.name, wrong, 'path'), request };
      }
    if (!target.body) return;
    const base = url(target, queryPairs(target));
    for (const field of Object.keys(target.body.schema.properties ?? {})) {
      const valid = validBody(target, field);
      for (const wrong of WRONG) {
        if (target.body.types.includes('application/x-www-form-urlencoded')) {
          const payload = [qs.stringify(valid), ...wrong.form(field).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)]
            .filter(Boolean)
            .join('&');
          const request = { method, url: base, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload };
          yield { label: label(field, wrong, 'urlencoded'), request };
        }
        if (target.body.types.includes('application/json')) {
          const json = JSON.stringify(valid);
          const payload = `${json.slice(0, -1)}${json === '{}' ? '' : ','}${JSON.stringify(field)}:${wrong.json}}`;
          yield {
            label: label(field, wrong, 'JSON'),
            request: { method, url: base, headers: { 'content-type': 'application/json' }, payload },
          };
        }
        if (!target.body.types.includes('application/json')) {
          // The CSV upload: multipart only, with a valid file unless the file is the field sent wrong.
          const fields: Record<string, string> = {};
          for (const [k, v] of Object.entries(valid)) if (k !== 'file') fields[k] = String(v);
          for (const [k, v] of wrong.form(field)) fields[k] = v;
          const body = multipart(fields, field === 'file' ? undefined : { content: CSV });
          yield { label: label(field, wrong, 'multipart'), request: { method, url: base, headers: body.headers, payload: body.payload } };
        }
      }
    }
  }

  it('sends every documented field of every route as every wrong type without a 5xx', async (ctx) => {
    // A full key of its own: a wrong id such as `id[0]=1` reads as 1, and key 1 is the account's Default.
    const keys = { publickey: fuzzKey.keys!.public_key, secretkey: fuzzKey.keys!.secret_key };
    const all = targets();
    assert.ok(all.length >= 70, `${all.length} operations`);
    let sent = 0;
    let fields = 0;
    const statuses = new Map<number, number>();
    // Every failing case is collected (one line each), so that one run shows them all.
    const failures: string[] = [];
    for (const target of all) {
      fields += target.query.length + target.pathParams.length + Object.keys(target.body?.schema.properties ?? {}).length;
      for (const { label, request: r } of requests(target)) {
        sent++;
        const before = logged.length;
        const res = await t.app.inject({ method: r.method as 'GET', url: r.url, headers: { ...keys, ...r.headers }, payload: r.payload });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        try {
          checkAnswer(res.statusCode, res.headers['content-type'] as string | undefined, res.body, describeRequest(r), logged.at(-1));
        } catch (err) {
          if (failures.length === 0) failures.push(`first: ${(err as Error).message}`);
          failures.push(
            `${label}: ${res.statusCode} ${res.body.slice(0, 100)} ${logged.length > before ? (JSON.parse(logged.at(-1)!).err?.message ?? '') : ''}`,
          );
        }
      }
    }
    assert.equal(failures.length, 0, `${failures.length - 1} of ${sent} requests failed:\n${failures.slice(0, 60).join('\n')}`);
    ctx.diagnostic(
      `${sent} requests: ${all.length} operations, ${fields} fields; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    // Most answers are field errors: the wrong value got past parsing and was checked.
    assert.ok((statuses.get(422) ?? 0) > sent / 2, `statuses ${JSON.stringify([...statuses])}`);
    assert.ok(fields >= 150, `${fields} fields`);
  });

  it('is alive at the end, and logged no error', async () => {
    const r = await fuzzKey.get('/contacts-type', { page: 1 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(logged, []);
  });
});
