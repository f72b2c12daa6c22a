import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import querystring from 'node:querystring';
import fc from 'fast-check';
import { normalizeInput, parseForm } from '../../src/http/body.js';
import { make, setup, type TestContext } from '../helpers.js';

/** Pieces of flat query strings whose every escape is well formed. */
const WELL_FORMED = [
  'a',
  'b',
  'id',
  'é',
  '😀',
  ' ',
  '=',
  '&',
  '&&',
  '+',
  '%20',
  '%2B',
  '%2b',
  '%25',
  '%26',
  '%3D',
  '%41',
  '%C3%A9',
  '%E2%82%AC',
  '%F0%9F%98%80',
  '%00',
  ';',
  '?',
  '#',
  ']',
  '.',
  'toString',
  '__proto__',
  'constructor',
  'hasOwnProperty',
];
/** Pieces that make an escape malformed: not hex, cut short, or not UTF-8. */
const MALFORMED = ['%', '%2', '%zz', '%G1', '%FF', '%C3', '%E2%82', '%ED%A0%80'];

const flat = (pieces: string[]) => fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(''));

/** What every component becomes: `+` is a space, then `%XX` decoded; kept as sent if that fails. */
function decodeOrKeep(component: string): string {
  const spaced = component.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** The reading parseForm promises for a flat string, written out plainly. */
function expectedFlat(input: string): Array<[string, string | string[]]> {
  const out = new Map<string, string | string[]>();
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decodeOrKeep(eq === -1 ? pair : pair.slice(0, eq));
    const value = decodeOrKeep(eq === -1 ? '' : pair.slice(eq + 1));
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : ([] as string[]).concat(prev, value));
  }
  return [...out];
}

describe('query string parsing', () => {
  it('reads flat strings exactly as node:querystring does (keys, values, repeated names, + and %XX)', () => {
    fc.assert(
      fc.property(flat(WELL_FORMED), (s) => {
        assert.deepEqual(Object.entries(parseForm(s)), Object.entries(querystring.parse(s, '&', '=', { maxKeys: 0 })));
      }),
      { seed: 8, numRuns: 3000 },
    );
  });

  it('keeps a component with a malformed escape as sent (+ as a space), like qs, where querystring puts U+FFFD', () => {
    fc.assert(
      fc.property(flat([...WELL_FORMED, ...MALFORMED]), (s) => {
        assert.deepEqual(Object.entries(parseForm(s)), expectedFlat(s));
      }),
      { seed: 8, numRuns: 3000 },
    );
    assert.deepEqual({ ...parseForm('a=x+%zz&b=%FF&c=%C3%A9') }, { a: 'x %zz', b: '%FF', c: 'é' });
    assert.deepEqual(JSON.parse(JSON.stringify(parseForm('a[x]=x+%zz&b[]=%FF'))), { a: { x: 'x %zz' }, b: ['%FF'] });
  });

  it('reads bracketed names as arrays and objects', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(parseForm('strIds[0]=4&strIds[1]=5&custom_field[age]=3&custom_field%5Bshoe%5D=9'))), {
      strIds: ['4', '5'],
      custom_field: { age: '3', shoe: '9' },
    });
  });

  it('never exposes prototype members: toString, constructor and __proto__ are plain names or dropped', () => {
    for (const s of ['a=1', 'a[b]=1']) {
      const parsed = parseForm(s) as Record<string, unknown>;
      for (const name of ['toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__']) {
        assert.equal(parsed[name], undefined, `${s}: ${name}`);
      }
    }
    assert.deepEqual({ ...parseForm('toString=1&valueOf=2') }, { toString: '1', valueOf: '2' });
    assert.deepEqual(JSON.parse(JSON.stringify(parseForm('constructor[prototype]=1&a[toString]=2'))), {
      constructor: { prototype: '1' },
      a: { toString: '2' },
    });
    for (const s of ['__proto__=x', '__proto__[polluted]=1', 'a[__proto__][polluted]=1', 'constructor[prototype][polluted]=1']) {
      const input = normalizeInput(parseForm(s)) as Record<string, any>;
      assert.equal(Object.getPrototypeOf(input), null, s);
      assert.equal(Object.keys(input).includes('__proto__'), false, s);
      assert.equal(input.polluted, undefined, s);
      assert.equal(input.a?.polluted, undefined, s);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('normalises into objects without a prototype, dropping __proto__ names', () => {
    const input = normalizeInput({ a: ' x ', custom_field: { constructor: '', b: 'y' }, ['__proto__']: 'z' }) as Record<string, any>;
    assert.equal(Object.getPrototypeOf(input), null);
    assert.equal(Object.getPrototypeOf(input.custom_field), null);
    assert.deepEqual(JSON.parse(JSON.stringify(input)), { a: 'x', custom_field: { constructor: null, b: 'y' } });
  });
});

describe('query strings with prototype names, over HTTP', () => {
  let t: TestContext;
  let contactId: number;
  before(async () => {
    t = await setup();
    contactId = await make.contact(t.a);
  });
  after(() => t.close());

  it('answers as if the extra names were not there', async () => {
    for (const extra of [
      'toString=1',
      'valueOf=1&hasOwnProperty=2',
      '__proto__=x',
      '__proto__[polluted]=1',
      'constructor[prototype]=1',
      'constructor=1',
    ]) {
      const r = await t.a.request('GET', `/contacts/details?contact_id=${contactId}&${extra}`);
      assert.equal(r.status, 200, `${extra}: ${r.text}`);
      assert.equal(r.body.message.contact.id, contactId);
      const list = await t.a.request('GET', `/contacts-type?page=1&${extra}`);
      assert.equal(list.status, 200, `${extra}: ${list.text}`);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('reads a form body with prototype names as ordinary fields', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', {
      payload: 'toString=1&constructor[prototype]=2&__proto__[name]=Evil&name=Plain',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 200, r.text);
    const view = await t.a.get('/contacts-type/view', { contact_type_id: r.body.id });
    assert.equal(view.body.message.contactType.name, 'Plain');
  });
});
