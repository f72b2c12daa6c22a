import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createDb } from '../../src/db/index.js';
import { CHECKPOINT_INTERVAL_MS } from '../../src/db/checkpoint.js';

const dir = mkdtempSync(join(tmpdir(), 'campaign-checkpoint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function autoCheckpointPages(database: ReturnType<typeof createDb>): Promise<number> {
  const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
  return rows[0].wal_autocheckpoint;
}

describe('SQLite checkpoints in the background', () => {
  it('keeps checkpoints out of commits and copies the WAL into the file from another thread', async () => {
    const path = join(dir, 'background.db');
    const database = createDb(`sqlite:${path}`, { server: true });
    assert.equal(await autoCheckpointPages(database), 0);
    await sql`create table t (id integer primary key, v text)`.execute(database.db);
    const before = statSync(path).size;
    await sql`insert into t (v) with recursive n(i) as (select 1 union all select i + 1 from n where i < 10000) select hex(randomblob(500)) from n`.execute(database.db);
    const version = database.version!();
    // The commit left ~10,000 rows in the WAL (well over SQLite's own 1,000-page trigger); the
    // thread copies them into the database file within a few of its intervals.
    let grown = false;
    for (let i = 0; i < 100 && !grown; i++) {
      grown = statSync(path).size > before + 5_000_000;
      if (!grown) await new Promise((r) => setTimeout(r, CHECKPOINT_INTERVAL_MS / 2));
    }
    assert.ok(grown, 'the database file holds the committed rows');
    assert.equal(database.version!(), version, 'a checkpoint is not a change of data');
    const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(database.db);
    assert.equal(rows[0].n, 10_000);
    await database.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the WAL is gone once the last connection closed');
  });

  it('leaves SQLite\'s own checkpoints on by default (the CLI, tests)', async () => {
    const database = createDb(`sqlite:${join(dir, 'inline.db')}`);
    assert.equal(await autoCheckpointPages(database), 1000);
    await database.close();
  });
});
