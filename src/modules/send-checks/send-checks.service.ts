/**
 * The check of a single send before it goes (`GET /single-send/check`): the links of its design,
 * with a warning for each that goes nowhere in a mail, and the other things worth a look (an
 * unknown placeholder, an unverified sender, no recipient); for an A/B test, every variant's design
 * and subject, each warning naming its variant. Warnings only: the send stays possible; the
 * console shows them in its review step.
 */
import { senderDomainStatus } from '../sending-domains/sending-domains.engine.js';
import type { AppDeps } from '../../deps.js';
import { PLACEHOLDER_NAMES } from '../../delivery/placeholders.js';
import { DesignError, tokenize, type CompiledDesign, type Segments } from '../../delivery/render.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { findSender, findVerifiedSender } from '../senders/senders.queries.js';
import { selectVariants } from '../single-sends/ab-tests.queries.js';
import { countSingleSendRecipients } from '../single-sends/single-sends.service.js';
import { hasOwnDesign } from '../single-sends/message.js';
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

/** `warning` of A/B test variant `index` (undefined: a send without a test): the variant named in its words and its field. */
function ofVariant(warning: CheckWarning, index: number | undefined): CheckWarning {
  if (index === undefined) return warning;
  return { ...warning, message: `Variant ${index}: ${warning.message}`, variant: index };
}

/**
 * What one part of the send carries: a design (its links, and placeholders in it and its subject),
 * or a subject alone (an A/B test's variant that has the send's design).
 */
type Part = { index: number | undefined; design: () => Promise<CompiledDesign> } | { index: number; subject: string };

/** `GET /single-send/check`: the send's links and warnings, and how many it would go to now. */
export async function checkSingleSend(deps: AppDeps, userId: number, rawUtr: unknown): Promise<SendCheck> {
  const { db } = deps.database;
  const send = await requireSend(deps, userId, rawUtr);
  const ab = Number(send.ab_test) === 1;
  // An A/B test's variants are checked as the send is: each design once (a variant without a
  // design of its own shares variant 0's), each subject's placeholders, every warning naming its variant.
  const parts: Part[] = [{ index: ab ? 0 : undefined, design: () => viewDesign(db, send) }];
  if (ab)
    for (const v of await selectVariants(db, [send.id]))
      parts.push(
        hasOwnDesign(v)
          ? { index: Number(v.variant), design: () => viewDesign(db, send, v) }
          : { index: Number(v.variant), subject: v.subject },
      );
  const warnings: CheckWarning[] = [];
  const links: SendCheck['links'] = [];
  let fields: Set<string> | undefined;
  const unknown = async (names: Iterable<string>) => {
    const others = [...names].filter((n) => !KNOWN.has(n));
    if (others.length === 0) return [];
    fields ??= new Set([...(await customFieldsByName(db, userId)).keys()].map((k) => k.toLowerCase()));
    return others.filter((n) => !fields!.has(n));
  };
  for (const part of parts) {
    const found: CheckWarning[] = [];
    let names: Iterable<string>;
    if ('subject' in part) names = tokenize(part.subject).keys;
    else
      try {
        const compiled = await part.design();
        for (const link of designLinks(withTokens(compiled.html))) {
          links.push(part.index === undefined ? link : { ...link, variant: part.index });
          const warning = linkWarning(link);
          if (warning) found.push(warning);
        }
        names = compiled.names;
      } catch (err) {
        if (!(err instanceof DesignError)) throw err;
        found.push({ type: 'design_invalid', message: `The design cannot be used: ${err.message}` });
        names = [];
      }
    for (const name of await unknown(names))
      found.push({
        type: 'unknown_placeholder',
        message: `((${name})) is neither a contact field nor a custom field: it will be empty in every mail.`,
      });
    warnings.push(...found.map((w) => ofVariant(w, part.index)));
  }
  if (!(await findVerifiedSender(db, userId, send.sender_id)))
    warnings.push({
      type: 'sender_not_verified',
      message: (await findSender(db, userId, send.sender_id))
        ? 'The sender is not verified: the send is refused until its address is confirmed.'
        : 'The sender no longer exists: choose another one.',
    });
  const domainStatus = await senderDomainStatus(deps, userId, send.from_sender);
  if (domainStatus === 'none' || domainStatus === 'failed')
    warnings.push(
      domainStatus === 'none'
        ? {
            type: 'sender_domain_unauthenticated',
            message: `The sender's domain (${send.from_sender.split('@').pop()}) is not a sending domain: the mail is not signed with its own DKIM key and may go to spam. Add it under Settings → Sending domains.`,
          }
        : {
            type: 'sender_domain_failed',
            message: `The sender's domain fails authentication: the send is refused until its DNS records pass.`,
          },
    );
  const recipients = await countSingleSendRecipients(deps, userId, send.utr);
  if (recipients === 0)
    warnings.push({
      type: 'no_recipients',
      message: 'Nobody would get this send now: its recipients are empty, excluded, unsubscribed or suppressed.',
    });
  return { links, recipients, warnings };
}
