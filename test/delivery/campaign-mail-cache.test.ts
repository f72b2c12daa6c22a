import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/index.js';
import { compiledDesignsCached, compiledOnce } from '../../src/delivery/campaign-mail.js';
import { renderFor } from '../../src/delivery/render.js';
import { freshDatabase } from '../helpers.js';

const design = (body: string) => ({
  design: { templateHtml: `<!doctype html><html><head><title></title></head><body><p>${body}</p></body></html>` },
  subject: body,
  footer: false,
});

describe('campaign mail: the compiled designs are kept per database', () => {
  const dbs: Array<{ database: Database; drop: () => Promise<void> }> = [];
  before(async () => {
    dbs.push(await freshDatabase(), await freshDatabase());
  });
  after(async () => {
    for (const d of dbs) await d.drop();
  });

  it('two databases with the same campaign key each get their own design, compiled once each', async () => {
    const [a, b] = dbs.map((d) => d.database.db);
    const first = compiledOnce(a, 'single_send:1', () => design('Design of A'));
    const second = compiledOnce(b, 'single_send:1', () => design('Design of B'));
    assert.notEqual(first, second);
    assert.equal(renderFor(await first, {}).subject, 'Design of A');
    assert.equal(renderFor(await second, {}).subject, 'Design of B');
    // Kept: the same key of the same database is not compiled again.
    assert.equal(
      compiledOnce(a, 'single_send:1', () => assert.fail('compiled twice')),
      first,
    );
    assert.equal(compiledDesignsCached(a), 1);
    assert.equal(compiledDesignsCached(b), 1);
  });
});
