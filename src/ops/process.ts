import type { FastifyBaseLogger } from 'fastify';

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/** A start-up failure the operator can fix, told in one line without a stack trace. */
export class StartError extends Error {}

/**
 * Stops the process cleanly on SIGINT/SIGTERM: `stop` (close the server, let the worker finish or
 * release what it holds, close the transport and the database), then exit 0. Whatever hangs (a
 * client holding a connection open) cannot keep the process alive past the grace period.
 */
export function stopOnSignals(log: FastifyBaseLogger, stop: () => Promise<void>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.warn('shutdown grace period over; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    await stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** Runs a process entry: a StartError is one line on stderr, anything else its stack; exit 1. */
export function runEntry(main: () => Promise<void>): void {
  main().catch((err) => {
    // process.exit right after: the message must not wait behind buffered output.
    if (err instanceof StartError) process.stderr.write(err.message + '\n');
    else console.error(err);
    process.exit(1);
  });
}
