// The entry of a worker thread whose module is TypeScript (see `startWorker` in workers.ts): Node
// 20 workers do not inherit the parent's tsx hooks, so this plain module loads tsx's API, then the
// module named by the first argument through it. Compiled code never comes here.
import { tsImport } from 'tsx/esm/api';

await tsImport(process.argv[process.argv.length - 1], import.meta.url);
