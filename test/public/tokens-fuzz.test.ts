import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { setup, type TestContext } from '../helpers.js';
import { seedSingleSend, type SeededSend } from './seed.js';

// Seeded: a failure replays with the same seed.
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

/**
 * The public routes that take a signed token (the open pixel, the preferences page and its
 * one-click POST, the click redirect) under malformed tokens: genuine tokens with characters
 * inserted, removed or replaced, and arbitrary text. Never a 5xx, never a redirect, and nothing is
 * counted or unsubscribed.
 */
describe('public token routes under malformed tokens', () => {
  let t: TestContext;
  let send: SeededSend;
  let genuine: string[];

  before(async () => {
    t = await setup();
    send = await seedSingleSend(t.database.db, t.a.keys!.user_id, ['fuzz@example.com']);
    const links = trackingLinks(t.config);
    const id = send.messageIds[0];
    genuine = [links.openToken(id), links.unsubscribeToken(id), links.clickToken(id, 1)];
  });
  after(() => t.close());

  /** A genuine token with 1–3 edits, or arbitrary text: never a genuine token of the message. */
  const malformed = fc.oneof(
    fc
      .tuple(
        fc.constantFrom(0, 1, 2),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('a', 'Z', '0', '.', '-', '_', '%', '/', ' ', 'é', '\u0000', ''), fc.boolean()), {
          minLength: 1,
          maxLength: 3,
        }),
      )
      .map(([which, edits]) =>
        edits.reduce((token, [at, ch, replace]) => {
          const i = at % (token.length + 1);
          return token.slice(0, i) + ch + token.slice(i + (replace ? 1 : 0));
        }, genuine[which]),
      ),
    fc.string({ maxLength: 300 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
  );

  it('answers no 5xx, no redirect, and changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(malformed, async (token) => {
        fc.pre(!genuine.includes(token));
        const path = encodeURIComponent(token);
        // Straight through the app: a token the router cannot place is an undocumented "Route not found", which is fine here.
        const answers = [
          await t.app.inject({ method: 'GET', url: `/t/open/${path}.gif` }),
          await t.app.inject({ method: 'GET', url: `/u/${path}` }),
          await t.app.inject({ method: 'POST', url: `/u/${path}`, payload: 'List-Unsubscribe=One-Click', headers: FORM }),
          await t.app.inject({ method: 'GET', url: `/t/click/${path}` }),
        ].map((r) => ({ status: r.statusCode }));
        for (const r of answers) {
          assert.ok(r.status < 500, `${r.status} for ${JSON.stringify(token)}`);
          assert.notEqual(r.status, 302, `a redirect for ${JSON.stringify(token)}`);
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
    const message = await t.database.db
      .selectFrom('mail_messages')
      .select(['opens', 'clicks', 'unsubscribed'])
      .where('id', '=', send.messageIds[0])
      .executeTakeFirstOrThrow();
    assert.deepEqual(message, { opens: 0, clicks: 0, unsubscribed: 0 });
    const unsubscribers = await t.database.db.selectFrom('unsubscribers').select('id').execute();
    assert.deepEqual(unsubscribers, []);
  });
});
