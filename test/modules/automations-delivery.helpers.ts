import assert from 'node:assert/strict';
import type { Client } from '../helpers.js';
import type { SendsContext } from './single-sends.helpers.js';

/** One email of a sequence: its subject and wait (`[period, type]`, default instantly). */
export interface EmailSpec {
  subject: string;
  wait?: [number, 'instantly' | 'hours' | 'days'];
  html?: string;
}

/** Creates an automation with its emails through the API; returns its utr. */
export async function automationWith(
  c: Client,
  opts: { type: 'welcome' | 'custom'; target: string; group: number; sender: number; emails: EmailSpec[]; exit?: 0 | 1; name?: string },
): Promise<string> {
  const r = await c.post('/automations/create', {
    type: opts.type,
    automation_for: opts.target,
    automation_name: opts.name ?? 'Onboarding',
    unsubscribe_group_id: opts.group,
    ...(opts.exit !== undefined ? { exit_criteria: opts.exit } : {}),
  });
  assert.equal(r.status, 200, r.text);
  const utr: string = r.body.message.utr;
  for (const e of opts.emails) await addEmail(c, utr, opts.sender, e);
  return utr;
}

/** Adds an email to the automation through the API. */
export async function addEmail(c: Client, utr: string, sender: number, e: EmailSpec): Promise<void> {
  const [period, type] = e.wait ?? [1, 'instantly'];
  const r = await c.post('/automations/schedule/create', {
    utr,
    sender_id: sender,
    subject: e.subject,
    waiting_period: period,
    waiting_type: type,
    template_id: 1,
    preview_img: 'blank.png',
    template_html: e.html ?? `<html><body><p>${e.subject}: hello ((first_name))</p></body></html>`,
  });
  assert.equal(r.status, 200, r.text);
}

/** GET `path?utr=` and expects success. */
export async function act(c: Client, path: '/automations/set-live' | '/automations/pause', utr: string): Promise<void> {
  const r = await c.get(path, { utr });
  assert.equal(r.status, 200, r.text);
}

/** The subjects the sink received for `address`, in arrival order. */
export function subjectsTo(t: SendsContext, address: string): string[] {
  return t.sink!.to(address).map((m) => m.subject);
}
