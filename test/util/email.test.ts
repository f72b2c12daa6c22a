import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import fc from 'fast-check';
import { Email } from '../../src/http/schemas.js';
import { bareMessageId, isEmail, mailtoAddress } from '../../src/util/email.js';

// The routes' `Email` schema as Fastify compiles it (AJV with ajv-formats, full mode).
const ajv = new Ajv();
// ajv-formats is CommonJS: its function is `default` of the module object under NodeNext.
formats.default(ajv);
const schemaAccepts = ajv.compile(Email);

describe('isEmail', () => {
  it('accepts and refuses addresses as the request schemas do', () => {
    for (const value of [
      'a@example.com',
      'A.B+tag@sub.example.co.uk',
      "o'brien@example.ie",
      'a@b',
      'a@example',
      'a@@example.com',
      'a b@example.com',
      '.a@example.com',
      'a@-example.com',
      '',
    ]) {
      assert.equal(isEmail(value), schemaAccepts(value), value);
    }
    const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`;
    assert.equal(long.length > 254, true);
    assert.equal(isEmail(long), false);
    assert.equal(schemaAccepts(long), false);
  });

  it('agrees with the schema on generated addresses and near misses', () => {
    const candidates = fc.oneof(
      fc.emailAddress(),
      fc.emailAddress().map((e) => e.replace('@', '@@')),
      fc.tuple(fc.emailAddress(), fc.string({ maxLength: 3 })).map(([e, s]) => e + s),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(candidates, (value) => isEmail(value) === schemaAccepts(value)),
      { numRuns: 2000 },
    );
  });
});

describe('mailtoAddress', () => {
  it("percent-encodes the characters RFC 6068 reserves in a mailto address, keeping the separating '@'", () => {
    assert.equal(mailtoAddress('replies@example.com'), 'replies@example.com');
    assert.equal(mailtoAddress("o'brien+tag@example.ie"), "o'brien+tag@example.ie");
    assert.equal(mailtoAddress('a?subject=x&b=%41#c/d@example.org'), 'a%3Fsubject%3Dx%26b%3D%2541%23c%2Fd@example.org');
    assert.equal(mailtoAddress('"a@b"@example.org'), '%22a%40b%22@example.org');
  });

  it('gives back every valid address when the URI is parsed and decoded', () => {
    fc.assert(
      fc.property(fc.emailAddress(), (address) => {
        const uri = new URL(`mailto:${mailtoAddress(address)}?subject=unsubscribe%20t`);
        return decodeURIComponent(uri.pathname) === address && uri.search === '?subject=unsubscribe%20t';
      }),
      { numRuns: 2000 },
    );
  });
});

describe('bareMessageId', () => {
  it('reduces a Message-ID as transports, relays and reports give it to the bare id@host', () => {
    const cases: Array<[unknown, string | null]> = [
      ['<a1.42@mail.example.com>', 'a1.42@mail.example.com'],
      ['a1.42@mail.example.com', 'a1.42@mail.example.com'],
      ['  <a1.42@mail.example.com>  ', 'a1.42@mail.example.com'],
      ['<<a1.42@mail.example.com>>', 'a1.42@mail.example.com'],
      ['<a1.42@mail.example.com', 'a1.42@mail.example.com'],
      ['a1.42@mail.example.com>', 'a1.42@mail.example.com'],
      ['<a1@x.example> <b2@y.example>', 'a1@x.example'],
      ['a1@x.example (comment)', 'a1@x.example'],
      [12345, '12345'],
      ['', null],
      ['   ', null],
      ['<>', null],
      [null, null],
      [undefined, null],
      [{ id: 'a@b' }, null],
    ];
    for (const [value, bare] of cases) assert.equal(bareMessageId(value), bare, String(value));
  });

  it('takes linear time on 100 KB adversarial texts', () => {
    const n = 100 * 1024;
    for (const text of [
      '>'.repeat(n),
      `${'>'.repeat(n)}x`,
      '<'.repeat(n),
      `<${'a'.repeat(n)}`,
      '<a'.repeat(n / 2),
      `${' '.repeat(n)}x`,
      `<${' <a'.repeat(n / 3)}`,
    ]) {
      const started = performance.now();
      bareMessageId(text);
      const ms = performance.now() - started;
      assert.ok(ms < 100, `${ms.toFixed(1)} ms on ${JSON.stringify(text.slice(0, 8))}…`);
    }
  });
});
