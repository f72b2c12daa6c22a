import type SQLite from 'better-sqlite3';
import { startWorker } from '../util/workers.js';

/** How often the background thread copies committed WAL frames into the database file. */
export const CHECKPOINT_INTERVAL_MS = 250;

/** SQLite's own default: a commit that leaves this many WAL pages checkpoints on the spot. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Moves WAL checkpoints of a SQLite file off the connection that serves requests. By default
 * SQLite checkpoints inside the commit that pushes the WAL past 1,000 pages: a 200,000-row
 * import's commit then copies ~60 MB into the database file and syncs it before the response
 * goes out (a quarter of a second). Here the connection never checkpoints (`wal_autocheckpoint =
 * 0`) while a worker thread (`checkpoint.worker.ts`) does, a few times a second. Should the thread die, the connection
 * takes checkpoints back. Returns the function that stops the thread (call before closing).
 */
export function checkpointInBackground(sqlite: SQLite.Database, path: string): () => Promise<void> {
  sqlite.pragma('wal_autocheckpoint = 0');
  const worker = startWorker(import.meta.url, 'checkpoint.worker', {
    workerData: { path, intervalMs: CHECKPOINT_INTERVAL_MS },
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  worker.unref();
  let stopping = false;
  // An error (the file gone, a disk failure) ends the thread: checkpoints go back inline.
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      if (!stopping && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
      resolve();
    }),
  );
  return async () => {
    if (stopping) return;
    stopping = true;
    worker.ref(); // its exit is awaited: it must keep the event loop alive until then
    worker.postMessage('close');
    await exited;
  };
}
