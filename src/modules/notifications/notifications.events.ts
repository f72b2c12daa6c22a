import type { AppDeps } from '../../app.js';

/** Events that mail every notification recipient of the account (contract §14). */
export type EventName = 'single_send.completed' | 'contacts.imported' | 'sender.verified' | 'automation.live' | 'automation.paused';

/**
 * Mails each notification recipient of the account a short note about the event. Never throws:
 * a failed notification is logged, it does not fail the operation that caused it.
 * (Filled in by the notifications work; until then a no-op.)
 */
export async function notifyEvent(_deps: AppDeps, _userId: number, _event: EventName, _details: Record<string, unknown>): Promise<void> {}
