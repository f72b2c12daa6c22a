import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` that sits beside the caller (`base`: the caller's
 * `import.meta.url`): the compiled `name.js` when the caller runs as JavaScript (`dist/`), else
 * `name.ts`. Node 20 gives a worker none of the parent's module hooks, so a TypeScript module
 * (tests, benchmarks, scripts under tsx) is entered through `tsx-worker.mjs`, which registers tsx
 * in the thread first; that costs the thread about 0.3 s of CPU and 30 MB, which compiled code
 * never pays.
 */
export function startWorker(base: string, name: string, options: WorkerOptions = {}): Worker {
  if (!base.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, base), { ...options, execArgv: [] });
  const entry = new URL(`./${name}.ts`, base).href;
  return new Worker(new URL('./tsx-worker.mjs', import.meta.url), { ...options, argv: [entry] });
}
