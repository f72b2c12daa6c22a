import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb } from '../../src/db/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';

const mode = (file: string) => statSync(file).mode & 0o777;

describe('SQLite database file', () => {
  let dir: string;
  let umask: number;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-mode-'));
    // The usual umask, which leaves new files readable by every local user.
    umask = process.umask(0o022);
  });
  after(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is created readable and writable by its owner alone (0600), and so are its -wal and -shm files', async () => {
    const file = join(dir, 'data', 'campaign.db');
    const database = createDb(`sqlite:${file}`);
    try {
      await migrateToLatest(database.db);
      assert.equal(mode(file).toString(8), '600');
      assert.ok(existsSync(`${file}-wal`), 'WAL mode: the -wal file exists once the database is written');
      assert.equal(mode(`${file}-wal`).toString(8), '600');
      assert.equal(mode(`${file}-shm`).toString(8), '600');
    } finally {
      await database.close();
    }
  });

  it('leaves the mode of an existing file as its owner set it', async () => {
    const file = join(dir, 'shared.db');
    writeFileSync(file, '');
    chmodSync(file, 0o640);
    const database = createDb(`sqlite:${file}`);
    try {
      await migrateToLatest(database.db);
      assert.equal(mode(file).toString(8), '640');
    } finally {
      await database.close();
    }
  });
});
