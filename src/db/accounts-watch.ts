import type { Listener } from './listener.js';

/** The channel the `accounts` trigger notifies on every change (migration 006). */
export const ACCOUNTS_CHANNEL = 'campaign_accounts';

/**
 * PostgreSQL's `Database.version`: a number that changes whenever the accounts table may have
 * changed, read without a round trip. The process's listener subscribes to `ACCOUNTS_CHANNEL`; a
 * trigger notifies it on every insert, update, delete or truncate of `accounts`, by any process.
 * A change counts from the moment its notification arrives (on one host, well under a millisecond
 * after the commit). Notifications on other channels do not move it. While the listener is not
 * listening there is no version (undefined), so nothing is remembered; the number moves on when
 * the connection is lost, so what was remembered before stays stale once listening starts again.
 */
export function watchAccounts(listener: Listener): () => number | undefined {
  let changes = 0;
  listener.listen(ACCOUNTS_CHANNEL, () => changes++);
  return () => (listener.isListening() ? changes + listener.losses() : undefined);
}
