import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import type { Database } from '../../../src/db/index.js';
import { createAccount } from '../../../src/modules/accounts/accounts.service.js';
import { changeAccounts, Client, ENGINE, freshDatabase } from '../../helpers.js';
import { freePort, startEntry, until, type Child } from '../../support/processes.js';
import { keyClient } from './keys.helpers.js';

describe(
  'a key revoked on one server, used on a second server process sharing the database',
  { skip: ENGINE !== 'postgres' && 'PostgreSQL only' },
  () => {
    let database: Database;
    let drop: () => Promise<void>;
    let app: App;
    let child: Child;
    let port: number;
    let dir: string;
    let owner: Client;
    before(async () => {
      let url: string;
      ({ database, drop, url } = await freshDatabase());
      dir = mkdtempSync(join(tmpdir(), 'campaign-keys-'));
      app = await buildApp({ config: loadConfig({ DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: '0' }, { appSecret: 'x' }), database });
      await app.ready();
      owner = new Client(app, await createAccount(database.db, 'Shared'));
      port = await freePort();
      child = startEntry('src/main.ts', { DATABASE_URL: url, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'silent', APP_SECRET: 'x' });
      assert.ok(
        await until(async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok === true, 60_000),
        child.stdout,
      );
    });
    after(async () => {
      child?.proc.kill('SIGTERM');
      await child?.exited;
      await app?.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const there = (k: Client) =>
      fetch(`http://127.0.0.1:${port}/contacts-type`, { headers: { PublicKey: k.keys!.public_key, SecretKey: k.keys!.secret_key } });

    it('is refused there on its next request', async () => {
      const k = await keyClient(owner, ['contacts.read']);
      const id = (await owner.get('/keys')).body.message.keys.find((x: { public_key: string }) => x.public_key === k.keys!.public_key).id;
      // Used twice there: the second answer comes from what the other server remembers.
      assert.equal((await there(k)).status, 200);
      assert.equal((await there(k)).status, 200);
      // The revocation is heard by every server listening (this one too: the wait is for its notification).
      await changeAccounts(database, () => owner.delete('/keys/delete', { id }));
      const r = await there(k);
      assert.equal(r.status, 401);
      assert.deepEqual(await r.json(), { status: 'failed', errors: 'Invalid API credentials' });
    });

    it('narrows a key there when its scopes change', async () => {
      const k = await keyClient(owner, ['contacts.read']);
      const id = (await owner.get('/keys')).body.message.keys.find((x: { public_key: string }) => x.public_key === k.keys!.public_key).id;
      assert.equal((await there(k)).status, 200);
      await changeAccounts(database, () => owner.request('POST', '/keys/update', { json: { id, scopes: ['segments.read'] } }));
      const r = await there(k);
      assert.equal(r.status, 403);
      assert.deepEqual(await r.json(), { status: 'failed', errors: 'This key is not allowed to contacts.read.' });
    });
  },
);
