import type { Selectable } from 'kysely';
import type { AutomationScheduleTable, AutomationTable } from '../../db/types.js';

/** An automation as stored. */
export type AutomationRow = Selectable<AutomationTable>;
/** One email of an automation as stored. */
export type AutomationScheduleRow = Selectable<AutomationScheduleTable>;

/** `automation_type` values. */
export const AUTOMATION_TYPE = { welcome: 1, custom: 2 } as const;
/** `status` values: a paused automation is 0 again, with `live_at` kept. */
export const AUTOMATION_STATUS = { draft: 0, live: 1 } as const;
/** Seconds one unit of `waiting_type` stands for. */
const WAIT_SECONDS: Record<string, number> = { instantly: 0, hours: 3600, days: 86400 };

/** How long an email waits after the previous step (`instantly`: none, whatever `waiting_period` says). */
export function waitMs(schedule: Pick<AutomationScheduleRow, 'waiting_type' | 'waiting_period'>): number {
  return (WAIT_SECONDS[schedule.waiting_type] ?? 0) * Math.max(0, schedule.waiting_period) * 1000;
}
