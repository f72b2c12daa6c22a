/**
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ`: the stored and wire form of created_at/updated_at/deleted_at.
 * The date is required: stored times come from the injected clock (`deps.clock.now()`), never
 * from a silent read of the system clock, so tests on a test clock see the times they set.
 */
export function isoMicros(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** `YYYY-MM-DD HH:MM:SS` in UTC: the wire form of live_at/sent_at/send_at. */
export function sqlDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
