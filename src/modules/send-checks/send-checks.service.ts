/**
 * The check of a single send before it goes (`GET /single-send/check`): the links of its design,
 * with a warning for each that goes nowhere in a mail, and the other things worth a look (an
 * unknown placeholder, an unverified sender, no recipient). Warnings only: the
 * send stays possible; the console shows them in its review step.
 */
import type { AppDeps } from '../../deps.js';
import { PLACEHOLDER_NAMES } from '../../delivery/placeholders.js';
import { DesignError, type Segments } from '../../delivery/render.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { findSender, findVerifiedSender } from '../senders/senders.queries.js';
import { countSingleSendRecipients } from '../single-sends/single-sends.service.js';
import { requireSend, viewDesign } from '../test-sends/test-sends.preview.js';
import { designLinks, type DesignLink } from './send-checks.links.js';
import type { CheckWarning, SendCheck } from './send-checks.schema.js';

const KNOWN = new Set<string>(PLACEHOLDER_NAMES);

/** Compiled segments back into text, each placeholder written `((name))` again (so its links keep them). */
function withTokens(seg: Segments): string {
  return seg.lits.reduce((out, lit, i) => out + lit + (i < seg.keys.length ? `((${seg.keys[i]}))` : ''), '');
}

/** The warning of a link that goes nowhere, or null. */
function linkWarning(link: DesignLink): CheckWarning | null {
  const name = link.text ? `“${link.text}”` : 'A link';
  const at = { url: link.url, text: link.text };
  switch (link.kind) {
    case 'anchor':
      return { type: 'link_anchor', message: `${name} links to “${link.url}”, which goes nowhere in a mail.`, ...at };
    case 'empty':
      return { type: 'link_empty', message: `${name} has an empty link.`, ...at };
    case 'other':
      return { type: 'link_not_web', message: `${name} links to “${link.url}”, which is not a web address (https://…).`, ...at };
    default:
      return null;
  }
}

/** `GET /single-send/check`: the send's links and warnings, and how many it would go to now. */
export async function checkSingleSend(deps: AppDeps, userId: number, rawUtr: unknown): Promise<SendCheck> {
  const { db } = deps.database;
  const send = await requireSend(deps, userId, rawUtr);
  const warnings: CheckWarning[] = [];
  let links: DesignLink[] = [];
  try {
    const compiled = await viewDesign(send);
    links = designLinks(withTokens(compiled.html));
    for (const link of links) {
      const warning = linkWarning(link);
      if (warning) warnings.push(warning);
    }
    const others = [...compiled.names].filter((n) => !KNOWN.has(n));
    if (others.length > 0) {
      const fields = new Set([...(await customFieldsByName(db, userId)).keys()].map((k) => k.toLowerCase()));
      for (const name of others.filter((n) => !fields.has(n)))
        warnings.push({
          type: 'unknown_placeholder',
          message: `((${name})) is neither a contact field nor a custom field: it will be empty in every mail.`,
        });
    }
  } catch (err) {
    if (!(err instanceof DesignError)) throw err;
    warnings.push({ type: 'design_invalid', message: `The design cannot be used: ${err.message}` });
  }
  if (!(await findVerifiedSender(db, userId, send.sender_id)))
    warnings.push({
      type: 'sender_not_verified',
      message: (await findSender(db, userId, send.sender_id))
        ? 'The sender is not verified: the send is refused until its address is confirmed.'
        : 'The sender no longer exists: choose another one.',
    });
  const recipients = await countSingleSendRecipients(deps, userId, send.utr);
  if (recipients === 0)
    warnings.push({
      type: 'no_recipients',
      message: 'Nobody would get this send now: its recipients are empty, excluded, unsubscribed or suppressed.',
    });
  return { links, recipients, warnings };
}
