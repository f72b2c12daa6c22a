/**
 * The job runner of a process, with every lane listed once: the scheduler (the modules' scheduled
 * tasks), mail delivery (every kind of mail) and webhook delivery. `npm start` and `npm run
 * worker` run all three; tests and benchmarks choose theirs and may drive them by hand.
 */
import type { AppDeps } from './deps.js';
import { runnerName, startRunner, type Lane, type Runner, type RunnerOptions } from './jobs/runner.js';
import { schedulerLane, type ScheduledTask } from './jobs/scheduler.lane.js';
import { webhookLane, type WebhookLaneOptions } from './jobs/webhook.lane.js';
import { MAIL_KINDS } from './mail-kinds.js';
import { endpointsDisabled } from './modules/webhooks/webhooks.mail.js';
import { mailLane, type MailLaneOptions } from './messages/mail.lane.js';
import type { MailKinds } from './messages/messages.kinds.js';
import { QUEUE_CHANNEL } from './messages/mail.queue.js';
import { SCHEDULED_TASKS } from './scheduled-tasks.js';

/** The lanes a process can run. */
export const LANE_NAMES = ['scheduler', 'mail', 'webhooks'] as const;
export type LaneName = (typeof LANE_NAMES)[number];

/** Which lanes to run and how; every field has a default. */
export interface JobsOptions extends Omit<RunnerOptions, 'tickOrder'> {
  /** The lanes to run (default: all). */
  lanes?: readonly LaneName[];
  /** The kinds of mail the mail lane knows (default: the service's, `MAIL_KINDS`). */
  kinds?: MailKinds;
  /** The scheduler's tasks (default: the service's, `SCHEDULED_TASKS`). */
  tasks?: readonly ScheduledTask[];
  mail?: MailLaneOptions;
  webhooks?: WebhookLaneOptions;
}

/** A running job runner of the service's lanes. */
export interface Jobs extends Runner {
  /** The mail lane's in-flight window: what a crash may send twice (0 without a mail lane). */
  readonly inFlightWindow: number;
}

/**
 * Starts the job runner with the chosen lanes, all under one lease owner. Driven by hand
 * (`loop: false`), `tick()` runs the scheduler, the mail lane, the scheduler again and the
 * webhook lane, each once: what came due starts, its mail goes out, and what finished completes,
 * all in one tick; it returns how many messages and deliveries were claimed.
 */
export function startJobs(deps: AppDeps, opts: JobsOptions = {}): Jobs {
  const id = opts.id ?? runnerName();
  const chosen = new Set<string>(opts.lanes ?? LANE_NAMES);
  const lanes: Lane[] = [];
  let inFlightWindow = 0;
  if (chosen.has('scheduler')) lanes.push(schedulerLane(deps, opts.tasks ?? SCHEDULED_TASKS, QUEUE_CHANNEL));
  if (chosen.has('mail')) {
    const mail = mailLane(deps, opts.kinds ?? MAIL_KINDS, id, opts.mail);
    inFlightWindow = mail.inFlightWindow;
    lanes.push(mail);
  }
  if (chosen.has('webhooks')) {
    // An endpoint the lane disables: the webhooks module fails its deliveries and tells the account.
    lanes.push(webhookLane(deps, id, (trx, now, endpoints) => endpointsDisabled(trx, deps, now, endpoints), opts.webhooks));
  }
  const tickOrder = ['scheduler', 'mail', 'scheduler', 'webhooks'].filter((name) => chosen.has(name));
  return { ...startRunner(deps, lanes, { ...opts, id, tickOrder }), inFlightWindow };
}
