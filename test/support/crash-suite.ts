import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE, freshDatabase } from '../helpers.js';
import type { Child } from './processes.js';
import { createDb, type Database } from '../../src/db/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/** What a crash test's processes share: the database, its URL, a data folder, and the processes started. */
export interface CrashSuite {
  database: Database;
  url: string;
  dir: string;
  children: Child[];
}

/**
 * The set-up of a suite that kills processes of the service: before it, a database (a fresh
 * PostgreSQL one, or an SQLite file in a temporary folder) and that folder; after it, every process
 * it started killed and awaited, the database dropped and the folder removed. Call inside `describe`;
 * the fields are set once the suite's `before` has run.
 */
export function crashSuite(tag: string): CrashSuite {
  const suite = { children: [] } as unknown as CrashSuite;
  let drop: () => Promise<void>;
  before(async () => {
    suite.dir = mkdtempSync(join(tmpdir(), `campaign-${tag}-crash-`));
    if (ENGINE === 'postgres') ({ database: suite.database, drop, url: suite.url } = await freshDatabase());
    else {
      suite.url = `sqlite:${join(suite.dir, 'campaign.db')}`;
      suite.database = createDb(suite.url);
      await migrateToLatest(suite.database.db);
      drop = () => suite.database.close();
    }
  });
  after(async () => {
    for (const c of suite.children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(suite.children.map((c) => c.exited));
    await drop();
    rmSync(suite.dir, { recursive: true, force: true });
  });
  return suite;
}
