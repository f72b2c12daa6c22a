/**
 * How the service serves the console at /app: the page with its Content-Security-Policy and no
 * cache, hashed files with a year-long immutable cache, the page for any console path, a 404 for a
 * missing file, and a 503 page while the console is not built. A small stand-in build is written
 * for the test; the real build is checked in the browser tests.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setup, type TestContext } from '../helpers.js';

const INDEX =
  '<!doctype html><html lang="en"><head><script type="module" src="/app/assets/index-AbC123.js"></script></head><body></body></html>';

describe('serving the console at /app', () => {
  let t: TestContext;
  let missing: TestContext;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-build-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log("console");\n');
    t = await setup({ consoleDir: dir });
    missing = await setup({ consoleDir: join(dir, 'not-built') });
  });
  after(async () => {
    await t?.close();
    await missing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the page at /app with a strict Content-Security-Policy and no-cache, without keys', async () => {
    for (const path of ['/app', '/app/']) {
      const r = await t.anon.get(path);
      assert.equal(r.status, 200, path);
      assert.equal(r.text, INDEX);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.equal(r.headers['cache-control'], 'no-cache');
      const csp = String(r.headers['content-security-policy']);
      for (const directive of [
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
      ])
        assert.ok(csp.includes(directive), `${directive} in ${csp}`);
      const scriptSrc = /script-src ([^;]*)/.exec(csp)![1];
      assert.equal(scriptSrc, "'self'", 'scripts only from the service, never inline');
      assert.doesNotMatch(csp, /unsafe-eval|connect-src [^;]*http/);
      assert.equal(r.headers['x-frame-options'], 'DENY');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
    }
  });

  it('answers the page for any console path, so a reload or a shared link opens that page', async () => {
    for (const path of ['/app/contacts', '/app/contacts/12', '/app/settings?tab=senders']) {
      const r = await t.anon.get(path);
      assert.equal(r.status, 200, path);
      assert.equal(r.text, INDEX, path);
      assert.equal(r.headers['cache-control'], 'no-cache', path);
    }
  });

  it('serves hashed files with a year-long immutable cache', async () => {
    const r = await t.anon.get('/app/assets/index-AbC123.js');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /javascript/);
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(r.text, 'console.log("console");\n');
  });

  it('answers 404 for a missing file, never the page in its place, and never a file outside the build', async () => {
    for (const path of ['/app/assets/index-Old999.js', '/app/assets/../../etc/passwd', '/app/assets/%2e%2e/%2e%2e/package.json']) {
      const r = await t.anon.get(path);
      assert.ok(r.status === 404 || r.status === 403, `${path}: ${r.status}`);
      assert.notEqual(r.text, INDEX, path);
    }
  });

  it('answers 503 with a page saying to run npm run build while the console is not built', async () => {
    for (const path of ['/app', '/app/contacts']) {
      const r = await missing.anon.get(path);
      assert.equal(r.status, 503, path);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.match(r.text, /npm run build/);
    }
  });
});
