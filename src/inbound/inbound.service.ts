/**
 * One raw message that came back (by the inbound route or the SMTP listener) taken in: parsed into
 * a report, each recipient's event through `takeInEvent`, and the answer of `POST /inbound/email` (docs/bounces.md).
 */
import type { AppDeps } from '../deps.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { expectEvents, takeInEvent, type InboundSource } from './intake.js';
import { parseInboundMail, reportEvents, type InboundReport } from './parse.js';

/** The answer of `POST /inbound/email/<token>`: what the message was, about whom, and whether it named a message of ours. */
export interface MailIntake {
  kind: 'bounce' | 'complaint' | 'ignored';
  type: 'hard' | 'soft' | null;
  recipient: string | null;
  matched: boolean;
}

/**
 * Takes in one raw message: a bounce or complaint becomes one event per recipient it reports
 * (each matched, de-duplicated and applied by `takeInEvent`, all in one batch); anything else is
 * `ignored` and changes nothing. The answer describes the first recipient; `matched` is true when
 * any event named a message of this installation. It resolves once the events are committed.
 */
export async function takeInMail(
  deps: AppDeps,
  kinds: MailKinds,
  raw: Buffer,
  source: Extract<InboundSource, 'inbound' | 'smtp'>,
  envelopeTo: readonly string[] = [],
): Promise<MailIntake> {
  // While it is read, the next batch of events waits for its own (reports arriving together share a transaction).
  const read = expectEvents(deps, kinds);
  let report: InboundReport;
  try {
    report = await parseInboundMail(raw, envelopeTo);
  } finally {
    read();
  }
  const first = report.recipients[0];
  const events = reportEvents(report, raw, source);
  if (events.length === 0) {
    deps.log.info(
      { source, kind: 'ignored', address: first?.email ?? null, matched: false },
      'inbound mail ignored: no bounce or complaint',
    );
    return { kind: 'ignored', type: null, recipient: first?.email ?? null, matched: false };
  }
  // The recipients of one report go in the same batch (one transaction with the events of other reports arriving now).
  const results = await Promise.all(events.map((event) => takeInEvent(deps, kinds, event)));
  const matched = results.some((r) => r.matched);
  const recipient = results[0].recipient ?? events[0].email;
  return { kind: report.kind, type: report.kind === 'bounce' ? (first?.type ?? null) : null, recipient, matched };
}
