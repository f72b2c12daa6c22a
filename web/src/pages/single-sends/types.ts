/** The API shapes the single-send pages read (the OpenAPI document at /openapi.json has them all). */
import type { Message } from '../../lib/api';
import { zonedToUtc } from './time';

/** A single send as `/single-send/details` shows it. */
export type SingleSend = Message<'/single-send/details'>['singleSend'][number];

/** A contact type or segment a send goes to or excludes. */
export type RecipientRef = SingleSend['recipient_id'][number];

/** What decides an A/B test: people's unique opens or unique clicks, over delivered. */
export type Metric = NonNullable<SingleSend['ab_winner_metric']>;

/** A variant of an A/B test; all its design fields null: it has the send's design. */
export type Variant = SingleSend['variants'][number];

/** Whether a variant has a design of its own (variant 0's is the send's). */
export const hasOwnDesign = (v: Variant) => v.index > 0 && (v.template_id !== null || v.template_json !== null || v.template_html !== null);

/** A send's figures, with its hourly timeline and an A/B test's variants. */
export type Stats = Message<'/single-send/stats'>['stats'];

/** A variant's figures in the statistics (its test share only). */
export type VariantStats = Stats['variants'][number];

/** A variant's rate of `metric`: people's unique opens or clicks over delivered (0 with nothing delivered). */
export function variantRate(v: VariantStats, metric: Metric): number {
  if (v.delivered === 0) return 0;
  return (metric === 'opens' ? v.unique_human_opens : v.unique_clicks) / v.delivered;
}

/** A rate as a percentage with one decimal: `20.0 %`. */
export const percentText = (rate: number) => `${(rate * 100).toFixed(1)} %`;

/** What each metric counts: its name, and in one line how. */
export const METRIC_WORDS: Record<Metric, { name: string; explained: string }> = {
  opens: {
    name: "People's opens",
    explained: 'The share of delivered messages a person opened; machine opens (privacy proxies that fetch every image) are left out.',
  },
  clicks: {
    name: "People's clicks",
    explained: "The share of delivered messages in which a person clicked a link; security scanners' clicks are left out.",
  },
};

/** A wait in minutes as a person reads it: `45 minutes`, `4 hours`, `1 hour 30 minutes`. */
export function waitText(minutes: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h ? plural(h, 'hour') : '', m || !h ? plural(m, 'minute') : ''].filter(Boolean).join(' ');
}

/** A timestamp of the API (`2031-07-01T13:30:00.000000Z`) as `2031-07-01 13:30 UTC`. */
export const utcStamp = (at: string) => `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;

/** Whether a send is an A/B test still waiting for its winner (its test share going out, or its wait). */
export const awaitingWinner = (send: Pick<SingleSend, 'status' | 'ab_test' | 'ab_winner'>) =>
  send.status === 2 && send.ab_test === 1 && send.ab_winner === null;

/** A send's status in words. */
export function statusWord(
  send: Pick<SingleSend, 'status' | 'schedule_type'> & Partial<Pick<SingleSend, 'ab_test' | 'ab_winner' | 'ab_wait_ends_at'>>,
): string {
  switch (send.status) {
    case 0:
      return 'Draft';
    case 1:
      return send.schedule_type === 1 ? 'Scheduled' : 'Ready';
    case 2:
      if (send.ab_test === 1 && send.ab_winner === null) return send.ab_wait_ends_at ? 'Waiting for the winner' : 'Sending the test';
      return 'Sending';
    default:
      return 'Sent';
  }
}

/** When a send is scheduled, as the person gave it (`2030-03-01 08:00 Europe/Berlin`), or '' for an immediate one. */
export function scheduleText(send: Pick<SingleSend, 'schedule_type' | 'schedule_date' | 'schedule_time' | 'timezone'>): string {
  if (send.schedule_type !== 1) return '';
  return `${send.schedule_date} ${send.schedule_time.slice(0, 5)} ${send.timezone ?? 'UTC'}`;
}

/**
 * Whether a send may still be edited: a draft, or a send scheduled for a time still to come. A
 * send queued to go at once, or whose time has come, is about to start (or started): editing it
 * would race the sending, so the console offers its report instead.
 */
export function isEditable(
  send: Pick<SingleSend, 'status' | 'schedule_type' | 'schedule_date' | 'schedule_time' | 'timezone'>,
  now = Date.now(),
): boolean {
  if (send.status === 0) return true;
  if (send.status !== 1 || send.schedule_type !== 1) return false;
  try {
    return zonedToUtc(send.schedule_date, send.schedule_time.slice(0, 8), send.timezone ?? 'UTC').getTime() > now;
  } catch {
    return false;
  }
}

/** `GET /single-send/preview`: the send's mail as one contact would get it. */
export type Preview = Message<'/single-send/preview'>['preview'];

/** The contact whose data fills a test or a preview (`contact` of `GET /single-send/preview`). */
export type FillContact = NonNullable<Preview['contact']>;

/** `GET /single-send/check`: the design's links, the recipient count and the warnings before sending. */
export type SendCheck = Message<'/single-send/check'>;

/** A link kind that goes nowhere for the mail's reader (the check warns about each). */
export const deadLink = (kind: SendCheck['links'][number]['kind']) => kind === 'anchor' || kind === 'empty' || kind === 'other';

/** A contact as the composer names it: `Ada Lovelace <ada@example.com>`, or the address alone. */
export function contactLabel(c: Pick<FillContact, 'email' | 'first_name' | 'last_name'>): string {
  const name = [c.first_name, c.last_name]
    .map((s) => (s ?? '').trim())
    .filter(Boolean)
    .join(' ');
  return name ? `${name} <${c.email}>` : c.email;
}
