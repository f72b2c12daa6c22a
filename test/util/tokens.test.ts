import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTokens } from '../../src/util/tokens.js';

describe('signed tokens', () => {
  const tokens = createTokens('secret-1');

  it('round-trips any JSON payload for its purpose', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ minLength: 1, maxLength: 20 }), (payload, purpose) => {
        const back = tokens.verify(purpose, tokens.sign(purpose, payload));
        assert.deepEqual(back, JSON.parse(JSON.stringify(payload)));
      }),
      { numRuns: 200 },
    );
  });

  it('is URL-safe', () => {
    assert.match(tokens.sign('open', { s: 1, r: 'a@b.c' }), /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses another purpose, another secret and any altered character', () => {
    const token = tokens.sign('unsubscribe', { r: 42 });
    assert.equal(tokens.verify('open', token), null);
    assert.equal(createTokens('secret-2').verify('unsubscribe', token), null);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...'ABCabc019-_.'), (i, ch) => {
        fc.pre(token[i] !== ch);
        assert.equal(tokens.verify('unsubscribe', token.slice(0, i) + ch + token.slice(i + 1)), null);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses junk without throwing', () => {
    for (const junk of [undefined, null, 42, {}, '', '.', 'a.b', 'a.b.c', '!!.??', 'x'.repeat(5000), ['a', 'b']]) {
      assert.equal(tokens.verify('p', junk), null);
    }
  });

  it('expires when asked to', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const token = tokens.sign('p', 'v', { expiresInSeconds: 60, now });
    assert.equal(tokens.verify('p', token, { now: new Date('2030-01-01T00:00:59Z') }), 'v');
    assert.equal(tokens.verify('p', token, { now: new Date('2030-01-01T00:01:00Z') }), null);
    assert.equal(tokens.verify('p', tokens.sign('p', 'forever'), { now: new Date('2100-01-01T00:00:00Z') }), 'forever');
  });
});
