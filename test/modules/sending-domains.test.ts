import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { assertNeedsKeys, fieldErrors } from '../helpers.js';
import { keyClient, keyRefused } from './access/keys.helpers.js';
import { Rnf, TS } from './single-sends.helpers.js';
import { addDomain, checkNow, DMARC_RUA, domainsSuite, passingZone, SPF_INCLUDE } from './sending-domains.helpers.js';

const INVALID = fieldErrors({ domain: ['The domain must be a valid domain.'] });

describe('sending domains: the API', () => {
  const s = domainsSuite();

  it('adds a domain with a 2048-bit RSA key, sealed at rest, and the three records to publish', async () => {
    const r = await s.t.a.post('/sending-domains/create', { domain: 'News.Example.com.' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    const d = r.body.message.domain;
    assert.deepEqual(Object.keys(d), [
      'id',
      'domain',
      'display_domain',
      'dkim_selector',
      'status',
      'records',
      'checks',
      'last_checked_at',
      'created_at',
    ]);
    assert.equal(d.domain, 'news.example.com');
    assert.equal(d.display_domain, 'news.example.com');
    assert.equal(d.dkim_selector, 'campaign');
    assert.equal(d.status, 'pending');
    assert.deepEqual(d.checks, []);
    assert.equal(d.last_checked_at, null);
    assert.match(d.created_at, TS);
    const [dkim, spf, dmarc] = d.records;
    assert.equal(dkim.host, 'campaign._domainkey.news.example.com');
    assert.match(dkim.value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/);
    const key = createPublicKey({ key: Buffer.from(dkim.value.split('p=')[1], 'base64'), format: 'der', type: 'spki' });
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    assert.deepEqual(spf, { type: 'TXT', host: 'news.example.com', value: `v=spf1 ${SPF_INCLUDE} ~all`, purpose: 'spf' });
    assert.deepEqual(dmarc, {
      type: 'TXT',
      host: '_dmarc.news.example.com',
      value: `v=DMARC1; p=none; rua=mailto:${DMARC_RUA}`,
      purpose: 'dmarc',
    });
    const row = await s.t.database.db.selectFrom('sending_domains').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
    assert.ok(!row.private_key.includes('PRIVATE KEY'), 'the private key is not kept in clear');
    assert.ok(row.private_key.length > 1000);
  });

  it('takes a selector of its own; refuses the same domain twice in an account, not in another', async () => {
    const d = await addDomain(s.t.a, 'twice.example.com', { dkim_selector: 'S2026' });
    assert.equal(d.dkim_selector, 's2026');
    assert.equal(d.records[0].host, 's2026._domainkey.twice.example.com');
    const again = await s.t.a.post('/sending-domains/create', { domain: 'TWICE.example.com' });
    assert.equal(again.status, 422);
    assert.deepEqual(again.body, fieldErrors({ domain: ['The domain has already been taken.'] }));
    assert.equal((await s.t.b.post('/sending-domains/create', { domain: 'twice.example.com' })).status, 200);
    const badSelector = await s.t.a.post('/sending-domains/create', { domain: 'sel.example.com', dkim_selector: 'a.b' });
    assert.equal(badSelector.status, 422);
    assert.deepEqual(Object.keys(badSelector.body.errors), ['dkim_selector']);
  });

  it('refuses what is not a DNS name, a 254-character name included, with a clear 422', async () => {
    const label63 = 'a'.repeat(63);
    const name253 = [label63, label63, label63, 'b'.repeat(57), 'com'].join('.');
    assert.equal(name253.length, 253);
    assert.equal((await s.t.a.post('/sending-domains/create', { domain: name253 })).status, 200);
    const bad = [
      'not a domain',
      'localhost',
      '-lead.example.com',
      'trail-.example.com',
      'a..b.example.com',
      '192.0.2.1',
      'http://example.com',
      'user@example.com',
      `${'a'.repeat(64)}.example.com`,
      `x${name253}`,
      'under_score.example.com',
      '.',
      'a'.repeat(999),
    ];
    for (const domain of bad) {
      const r = await s.t.a.post('/sending-domains/create', { domain });
      assert.equal(r.status, 422, domain);
      assert.deepEqual(r.body, INVALID, domain);
    }
    for (const body of [{}, { domain: '' }]) {
      const missing = await s.t.a.post('/sending-domains/create', body);
      assert.deepEqual(missing.body, fieldErrors({ domain: ['The domain field is required.'] }));
    }
  });

  it('keeps an internationalised name as its A-label and shows its U-label', async () => {
    const d = await addDomain(s.t.a, 'Bücher.example');
    assert.equal(d.domain, 'xn--bcher-kva.example');
    assert.equal(d.display_domain, 'bücher.example');
    assert.equal(d.records[0].host, 'campaign._domainkey.xn--bcher-kva.example');
    const same = await s.t.a.post('/sending-domains/create', { domain: 'xn--bcher-kva.example' });
    assert.deepEqual(same.body, fieldErrors({ domain: ['The domain has already been taken.'] }));
  });

  it('lists, shows, checks and deletes; another account’s id is not found', async () => {
    const d = await addDomain(s.t.a, 'crud.example.com');
    const list = await s.t.a.get('/sending-domains');
    assert.equal(list.status, 200);
    assert.ok(list.body.message.domains.some((x: { id: number }) => x.id === d.id));
    assert.ok(!(await s.t.b.get('/sending-domains')).body.message.domains.some((x: { id: number }) => x.id === d.id));
    const paged = await s.t.a.get('/sending-domains', { page: 1, per_page: 1 });
    assert.equal(paged.body.message.domains.length, 1);
    assert.equal(typeof paged.body.message.meta.total, 'number');
    assert.deepEqual((await s.t.a.get('/sending-domains/details', { id: d.id })).body.message.domain, d);
    for (const c of [s.t.b]) {
      assert.deepEqual((await c.get('/sending-domains/details', { id: d.id })).body, Rnf);
      const checked = await c.post('/sending-domains/check', { id: d.id });
      assert.equal(checked.status, 404);
      assert.deepEqual(checked.body, Rnf);
      assert.deepEqual((await c.delete('/sending-domains/delete', { id: d.id })).body, Rnf);
    }
    for (const id of ['x', '0', '99999999', '']) assert.deepEqual((await s.t.a.get('/sending-domains/details', { id })).body, Rnf, id);
    assert.equal((await s.t.a.post('/sending-domains/check', { id: 'x' })).status, 422);
    s.dns.zone = passingZone(d);
    assert.equal((await checkNow(s.t.a, d.id)).status, 'verified');
    const del = await s.t.a.delete('/sending-domains/delete', { id: d.id });
    assert.deepEqual(del.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await s.t.a.get('/sending-domains/details', { id: d.id })).body, Rnf);
  });

  it('a read never asks DNS: only a check does', async () => {
    const d = await addDomain(s.t.a, 'quiet.example.com');
    s.dns.zone = passingZone(d);
    const before = s.dns.queries;
    await s.t.a.get('/sending-domains');
    await s.t.a.get('/sending-domains/details', { id: d.id });
    assert.equal(s.dns.queries, before);
    await checkNow(s.t.a, d.id);
    assert.ok(s.dns.queries > before);
  });

  it('needs keys, and the senders scopes', async () => {
    await assertNeedsKeys(s.t.anon, [
      ['GET', '/sending-domains'],
      ['GET', '/sending-domains/details'],
      ['POST', '/sending-domains/create'],
      ['POST', '/sending-domains/check'],
      ['DELETE', '/sending-domains/delete'],
    ]);
    const d = await addDomain(s.t.a, 'scoped.example.com');
    const reader = await keyClient(s.t.a, ['senders.read']);
    assert.equal((await reader.get('/sending-domains/details', { id: d.id })).status, 200);
    assert.deepEqual((await reader.post('/sending-domains/create', { domain: 'r.example.com' })).body, keyRefused('senders.write'));
    assert.deepEqual((await reader.post('/sending-domains/check', { id: d.id })).body, keyRefused('senders.write'));
    assert.deepEqual((await reader.delete('/sending-domains/delete', { id: d.id })).body, keyRefused('senders.write'));
    const other = await keyClient(s.t.a, ['contacts.read']);
    assert.deepEqual((await other.get('/sending-domains')).body, keyRefused('senders.read'));
  });
});
