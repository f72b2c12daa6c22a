/**
 * The checkpoint thread (`checkpointInBackground`): its own connection to the SQLite file runs a
 * PASSIVE checkpoint on a timer (it never waits for, nor blocks, readers or the writer); on any
 * message it runs a last one, closes and lets the thread end.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new SQLite(path, { fileMustExist: true });
const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)');
const timer = setInterval(checkpoint, intervalMs);
parentPort!.on('message', () => {
  clearInterval(timer);
  try {
    checkpoint();
  } finally {
    db.close();
    parentPort!.close();
  }
});
