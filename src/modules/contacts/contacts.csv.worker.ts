/**
 * The CSV scanner thread (`recordBatchesInWorker`): reads the file, posts record batches while it
 * has credit (the parent grants one per batch it takes), and posts a scan error's fields.
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { recordsOf } from './contacts.csv.records.js';

interface Job {
  path: string;
  delimiter: string;
  size: number;
  ahead: number;
  readBytes: number;
  maxChars: number;
}

const job = workerData as Job;
const port = parentPort!;
let credit = job.ahead;
let wake: (() => void) | null = null;
port.on('message', (n: number) => {
  credit += n;
  wake?.();
});

try {
  const chunks = createReadStream(job.path, { encoding: 'utf8', highWaterMark: job.readBytes });
  for await (const records of recordsOf(chunks, job.delimiter, job.size, job.maxChars)) {
    while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    credit--;
    port.postMessage({ records });
  }
  port.postMessage({ done: true });
} catch (err) {
  const e = err as { code?: string; records?: number; message?: string } | null;
  port.postMessage({ error: { code: e?.code, records: e?.records, message: String(e?.message) } });
}
port.close();
