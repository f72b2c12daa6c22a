/** What the automation pages share: the words for codes, and the lists the forms choose from. */
import { api } from '../../lib/api';
import type { UnsubscribeGroup } from '../../lib/types';
import type { Automation, AutomationForm, Schedule, Target } from './types';

/** The status in words: a paused automation is a draft that went live once. */
export function statusWord(a: Pick<Automation, 'status' | 'live_at'>): 'Live' | 'Paused' | 'Draft' {
  if (a.status === 1) return 'Live';
  return a.live_at ? 'Paused' : 'Draft';
}

/** `automation_type` in words: 1 welcome, 2 custom. */
export function typeWord(type: number): string {
  return type === 1 ? 'Welcome' : 'Custom';
}

/** The target key of an automation (`contacts_5`), as create and update take it. */
export function targetKey(a: Pick<Automation, 'automation_for' | 'automation_for_table'>): string {
  return `${a.automation_for_table === 'segments' ? 'segments' : 'contacts'}_${a.automation_for}`;
}

/** What an automation runs for, in words. */
export function targetWord(a: Pick<Automation, 'automation_for' | 'automation_for_table'>, targets: Target[]): string {
  const found = targets.find((t) => t.key === targetKey(a));
  if (found) return found.label;
  return a.automation_for_table === 'segments' ? 'A deleted segment' : 'A deleted contact type';
}

/** Every contact type and segment of the account, as targets. */
export async function loadTargets(): Promise<Target[]> {
  const [types, segments] = await Promise.all([api.get('/contacts-type'), api.get('/segment/list')]);
  return [
    ...types.contactTypes.map((t) => ({ key: `contacts_${t.id}`, label: `Contact type: ${t.name}`, kind: 'contacts' as const })),
    ...segments.segments.map((s) => ({ key: `segments_${s.id}`, label: `Segment: ${s.segment_name}`, kind: 'segments' as const })),
  ];
}

/** The account's unsubscribe groups. */
export async function loadGroups(): Promise<UnsubscribeGroup[]> {
  return (await api.get('/unsubscribes-groups')).unsubscribesGroups;
}

/** An email's wait in words: `Instantly`, `2 days`, `1 hour`. */
export function waitWord(s: Pick<Schedule, 'waiting_period' | 'waiting_type'>): string {
  if (s.waiting_type === 'instantly') return 'Instantly';
  const unit = s.waiting_type === 'days' ? 'day' : 'hour';
  return `${s.waiting_period} ${unit}${s.waiting_period === 1 ? '' : 's'}`;
}

/** The fields of the create and edit forms, in their order, with their labels (for the field errors). */
export const FORM_LABELS = [
  ['automation_name', 'Name'],
  ['type', 'Type'],
  ['automation_for', 'Runs for'],
  ['unsubscribe_group_id', 'Unsubscribe group'],
  ['exit_criteria', 'Stop for contacts who leave'],
] as const;

/** The keys create and update both take, from the form's values. */
export function formBody(form: AutomationForm): Record<string, string | number> {
  return {
    automation_name: form.automation_name,
    automation_for: form.automation_for,
    unsubscribe_group_id: form.unsubscribe_group_id,
    exit_criteria: form.exit_criteria ? 1 : 0,
  };
}
