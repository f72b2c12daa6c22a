/**
 * Local date and time in an IANA time zone ↔ UTC, with the browser's own zone data (Intl), so the
 * composer can say which UTC moment a schedule means. The service reads `schedule_date` and
 * `schedule_time` in the `timezone` sent with them, by the same rules as `zonedToUtc` here.
 */

/** The zone's offset from UTC (milliseconds, east positive) at the UTC instant `ms`. */
export function offsetAt(ms: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The UTC instant of the wall-clock `date` (`YYYY-MM-DD`) and `time` (`HH:MM` or `HH:MM:SS`) in
 * `zone`. A time that happens twice (clocks go back) is its first occurrence; a time that does not
 * exist (clocks go forward) moves forward by the gap (02:30 on that night is 03:30 local).
 */
export function zonedToUtc(date: string, time: string, zone: string): Date {
  const wall = Date.parse(`${date}T${time.length === 5 ? time + ':00' : time}Z`);
  if (Number.isNaN(wall)) throw new RangeError(`Not a date and time: ${date} ${time}`);
  const day = 86_400_000;
  const before = offsetAt(wall - day, zone);
  const offsets = [...new Set([before, offsetAt(wall, zone), offsetAt(wall + day, zone)])];
  const valid = offsets.map((o) => wall - o).filter((utc) => offsetAt(utc, zone) === wall - utc);
  if (valid.length) return new Date(Math.min(...valid));
  return new Date(wall - before);
}

/** A UTC instant as `YYYY-MM-DD HH:MM UTC`. */
export function utcText(d: Date): string {
  return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/** The browser's time zone (UTC when it cannot tell). */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
