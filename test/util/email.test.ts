import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import fc from 'fast-check';
import { Email } from '../../src/http/schemas.js';
import { isEmail } from '../../src/util/email.js';

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
