/** The records the automation pages read (pieces of the service's answers), and the forms' own shapes. */
import type { Message } from '../../lib/api';

export type Automation = Message<'/automations/details'>['automation'];

/** An automation as the list shows it, with its number of emails. */
export type AutomationListItem = Message<'/automations'>['automations'][number];

/** An automation's email. */
export type Schedule = Message<'/automations/schedule'>['automation_schedules'][number];

/** A target the automation can run for: `contacts_<id>` or `segments_<id>`, with its name. */
export interface Target {
  key: string;
  label: string;
  kind: 'contacts' | 'segments';
}

/** The values of the create and edit forms. */
export interface AutomationForm {
  automation_name: string;
  /** Empty until chosen (create). */
  type: 'welcome' | 'custom' | '';
  automation_for: string;
  unsubscribe_group_id: string;
  exit_criteria: boolean;
}
