import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';
import { person, personRefused, type SessionClient } from '../modules/access/sessions.helpers.js';
import { keyedOperations } from './scopes.test.js';

/** What each role may do, as the product defines it (written out here, not read from the code). */
function roleAllows(role: string, scope: string): boolean {
  const [area, level] = scope.split('.');
  if (role === 'owner' || role === 'admin') return true;
  if (['users', 'keys', 'audit'].includes(area)) return false;
  if (role === 'editor') return scope !== 'webhooks.write' && scope !== 'settings.write';
  return level === 'read';
}

/** The 403 of a person without `scope`: under /v3/, SendGrid's. */
const refusal = (path: string, scope: string) =>
  path.startsWith('/v3/') ? { errors: [{ field: null, message: 'access forbidden' }] } : personRefused(scope);

describe('every role against every scope', () => {
  let t: TestContext;
  let doc: any;
  const people = new Map<string, SessionClient>();
  before(async () => {
    t = await setup();
    doc = (await t.anon.get('/openapi.json')).body;
    for (const role of ['owner', 'admin', 'editor', 'viewer']) people.set(role, await person(t, role));
  });
  after(() => t.close());

  for (const role of ['owner', 'admin', 'editor', 'viewer']) {
    it(`${role}: every keyed route answers as the role allows`, async () => {
      const failures: string[] = [];
      let allowed = 0;
      for (const o of keyedOperations(doc)) {
        if (o.scope === 'none' || o.scope === undefined) continue;
        const r = await people.get(role)!.request(o.method, o.url);
        if (roleAllows(role, o.scope)) {
          allowed++;
          if (r.status === 403 || r.status === 401) failures.push(`${o.method} ${o.path} (${o.scope}) refused: ${r.text.slice(0, 100)}`);
        } else if (r.status !== 403 || JSON.stringify(r.body) !== JSON.stringify(refusal(o.path, o.scope)))
          failures.push(`${o.method} ${o.path} (${o.scope}) not refused: ${r.status} ${r.text.slice(0, 100)}`);
      }
      assert.deepEqual(failures, []);
      assert.ok(allowed > 0);
    });
  }
});
