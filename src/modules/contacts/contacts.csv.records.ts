import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { parse, type Options, type Parser } from 'csv-parse';
import type { Delimiter } from './contacts.csv.parse.js';

/** A single record may not exceed this many characters (an unclosed quote would swallow the file). */
const MAX_RECORD_CHARS = 1_000_000;

/** csv-parse's options for a file (also used by the worker thread, so both read alike). */
export function parserOptions(delimiter: Delimiter): Options {
  return { bom: true, delimiter, relax_column_count: true, relax_quotes: true, max_record_size: MAX_RECORD_CHARS };
}

/** Where records come from: arrays of up to `size`; csv-parse's errors (`code` CSV_…) are thrown as they are. */
export type RecordSource = (path: string, delimiter: Delimiter, size: number) => AsyncGenerator<string[][]>;

/**
 * Reads records in arrays of up to `size`, waiting for the parser only when its buffer is empty:
 * one await per batch, not per record, and the file is read only as fast as batches are taken.
 */
export async function* recordBatches(path: string, delimiter: Delimiter, size: number): AsyncGenerator<string[][]> {
  // A readable buffer of a whole batch (passed on to the Transform), so a batch needs few wake-ups.
  const parser: Parser = parse({ ...parserOptions(delimiter), readableHighWaterMark: size } as Options);
  const input = createReadStream(path, { highWaterMark: 256 * 1024 });
  let ended = false;
  let failure = null as (Error & { code?: string; records?: number }) | null;
  let wake: (() => void) | null = null;
  const poke = () => wake?.();
  parser.on('readable', poke);
  parser.on('end', () => ((ended = true), poke()));
  pipeline(input, parser, (err) => {
    if (err) failure = err;
    poke();
  });
  try {
    let batch: string[][] = [];
    for (;;) {
      let record: string[] | null;
      while (batch.length < size && (record = parser.read()) !== null) batch.push(record);
      if (batch.length === size) {
        yield batch;
        batch = [];
        continue;
      }
      if (failure) throw failure;
      if (ended) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    if (batch.length) yield batch;
  } finally {
    input.destroy();
    parser.destroy();
  }
}

/**
 * Files at least this big are parsed in a worker thread. csv-parse costs about as much CPU as the
 * database work, and better-sqlite3 runs on the main thread: in a worker, parsing overlaps it.
 * Smaller files stay on the main thread, where starting a thread would cost more than it saves.
 */
export const WORKER_MIN_BYTES = 1024 * 1024;

/** Batches the worker may parse ahead of the consumer: bounds what a slow database lets pile up. */
const AHEAD = 1;

const CSV_PARSE = createRequire(import.meta.url).resolve('csv-parse');

/**
 * The worker's code: plain CommonJS needing only csv-parse, so the thread starts in a few tens of
 * milliseconds and a few MB, without the app's modules or a TypeScript loader. It reads the file
 * with backpressure, posts record batches while it has credit, and posts csv-parse's error fields.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createReadStream } = require('node:fs');
const { pipeline } = require('node:stream');
const { parse } = require(workerData.csvParse);
let credit = workerData.ahead;
let wake = null;
parentPort.on('message', (n) => { credit += n; if (wake) wake(); });
const parser = parse({ ...workerData.options, readableHighWaterMark: workerData.size });
pipeline(createReadStream(workerData.path, { highWaterMark: 262144 }), parser, () => {});
(async () => {
  let batch = [];
  const send = async () => {
    while (credit === 0) await new Promise((resolve) => (wake = resolve));
    wake = null;
    credit--;
    parentPort.postMessage({ records: batch });
    batch = [];
  };
  try {
    for await (const record of parser) {
      batch.push(record);
      if (batch.length === workerData.size) await send();
    }
    if (batch.length) await send();
    parentPort.postMessage({ done: true });
  } catch (err) {
    parentPort.postMessage({ error: { code: err && err.code, records: err && err.records, message: String(err && err.message) } });
  }
  parentPort.close();
})();
`;

type Reply = { records: string[][] } | { done: true } | { error: { code?: string; records?: number; message: string } };

/**
 * A `RecordSource` that parses in a worker thread: the same batches, and csv-parse's errors with
 * their `code` and `records`. Stopping early terminates the worker.
 */
export async function* recordBatchesInWorker(path: string, delimiter: Delimiter, size: number): AsyncGenerator<string[][]> {
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { csvParse: CSV_PARSE, path, options: parserOptions(delimiter), size, ahead: AHEAD },
    // Short-lived garbage only: a small young generation keeps the thread's memory small.
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  const queue: Reply[] = [];
  let failure: Error | null = null;
  let exited = false;
  let wake: (() => void) | null = null;
  worker.on('message', (m: Reply) => (queue.push(m), wake?.()));
  worker.on('error', (err) => ((failure = err), wake?.()));
  worker.on('exit', () => ((exited = true), wake?.()));
  try {
    for (;;) {
      const reply = queue.shift();
      if (reply === undefined) {
        if (failure) throw failure;
        if (exited) throw new Error('the CSV worker stopped before the end of the file');
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        continue;
      }
      if ('done' in reply) return;
      if ('error' in reply) throw Object.assign(new Error(reply.error.message), reply.error);
      worker.postMessage(1); // one more batch may be parsed while this one is written
      yield reply.records;
    }
  } finally {
    await worker.terminate();
  }
}
