/**
 * Rendering a mail from a design (MJML JSON, HTML or a shipped template) with `((placeholder))`
 * values filled per recipient, in two phases:
 *   compileDesign(): once per mailing. MJML → HTML, footer and preheader added, the text part
 *     converted, and all three (subject, HTML, text) split into literal and placeholder segments.
 *   renderFor(): once per recipient. String joins only: no MJML, no HTML parsing, no regex over
 *     the document.
 */
import { randomInt } from 'node:crypto';
import { BLANK_TEMPLATE_ID, findShippedTemplate } from './designs.js';
import { CLICK_SLOT, markTrackedLinks } from './links.js';
import { compileMjml, DesignError, parseDesign, validateDesign, type MjmlNode } from './mjml.js';
import { escapeHtml, TOKEN, type PlaceholderValues } from './placeholders.js';
import { TRAP_AFTER, TRAP_BEFORE, TRAP_SLOT } from './trap-link.js';

export { DesignError, validateDesign };

/** Literal text and placeholder names, alternating: lits[0] keys[0] lits[1] … lits[n]. */
export interface Segments {
  readonly lits: readonly string[];
  readonly keys: readonly string[];
}

/** A design ready to render per recipient. */
export interface CompiledDesign {
  readonly subject: Segments;
  readonly html: Segments;
  readonly text: Segments;
  /** Every placeholder name used (lower case), so callers can skip values nobody reads. */
  readonly names: ReadonlySet<string>;
  /**
   * The tracked links (with `trackClicks`): distinct URLs in order of first appearance, as the
   * design has them (`((placeholders))` kept). Link `i`'s href in the HTML is the value of key
   * `CLICK_SLOT + i`. Empty without click tracking.
   */
  readonly links: readonly string[];
}

export interface RenderedMessage {
  subject: string;
  html: string;
  text: string;
}

/** Where the design comes from: `templateJson` (MJML JSON) first, then `templateHtml`, then a shipped template. */
export interface DesignInput {
  templateId?: number | null;
  templateJson?: string | null;
  templateHtml?: string | null;
}

export interface CompileInput {
  design: DesignInput;
  subject: string;
  preheader?: string | null;
  /** Add the postal address / unsubscribe footer where the design lacks them (mail must carry both). Default true. */
  footer?: boolean;
  /** Add a 1×1 open-tracking image whose URL is the value of `OPEN_PIXEL`. Default false. */
  openPixel?: boolean;
  /** Rewrite the `http:`/`https:` links of the HTML part into click slots (see `links`). Default false. */
  trackClicks?: boolean;
}

export { CLICK_SLOT };

/** The value key of the open-tracking image URL. `#` keeps it out of reach of `((…))` tokens in designs. */
export const OPEN_PIXEL = '#open_pixel';

/** Splits text at its `((name))` tokens; names are lower-cased (matching is case-insensitive). */
export function tokenize(text: string): Segments {
  const lits: string[] = [];
  const keys: string[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    lits.push(text.slice(last, m.index!));
    keys.push(m[1].toLowerCase());
    last = m.index! + m[0].length;
  }
  lits.push(text.slice(last));
  return { lits, keys };
}

/** Which of the footer's placeholders a design's source (MJML JSON or HTML) lacks. */
export function missingFooterParts(source: string): { address: boolean; unsubscribe: boolean } {
  const keys = new Set(tokenize(source).keys);
  return { address: !keys.has('sender_address'), unsubscribe: !keys.has('unsubscribe_preferences') };
}

function footerContent(missing: { address: boolean; unsubscribe: boolean }): string {
  const parts: string[] = [];
  if (missing.address) parts.push('((sender_name))<br>((sender_address))');
  if (missing.unsubscribe) {
    parts.push(
      '<a href="((unsubscribe_preferences))" style="color:#6b7280;text-decoration:underline;">Unsubscribe or manage your email preferences</a>',
    );
  }
  return parts.join('<br><br>');
}

const FOOTER_STYLE = 'font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:1.6;color:#6b7280;text-align:center;';

/** Adds the footer to an HTML design when it lacks `((sender_address))` or `((unsubscribe_preferences))`. */
export function withFooterHtml(html: string): string {
  const missing = missingFooterParts(html);
  if (!missing.address && !missing.unsubscribe) return html;
  const block = `<div style="${FOOTER_STYLE}padding:24px 16px;">${footerContent(missing)}</div>`;
  return insertBeforeBodyEnd(html, block);
}

/** The same for an MJML document: a last section in `mj-body`, so it follows the design's layout. */
export function withFooterMjml(doc: MjmlNode): MjmlNode {
  const missing = missingFooterParts(JSON.stringify(doc));
  if (!missing.address && !missing.unsubscribe) return doc;
  const section: MjmlNode = {
    tagName: 'mj-section',
    attributes: { padding: '24px 0' },
    children: [
      {
        tagName: 'mj-column',
        attributes: {},
        children: [
          {
            tagName: 'mj-text',
            attributes: { align: 'center', 'font-size': '12px', 'line-height': '1.6', color: '#6b7280', padding: '0 24px' },
            content: footerContent(missing),
          },
        ],
      },
    ],
  };
  return {
    ...doc,
    children: doc.children!.map((c) => (c.tagName === 'mj-body' ? { ...c, children: [...(c.children ?? []), section] } : c)),
  };
}

function insertBeforeBodyEnd(html: string, block: string): string {
  const at = html.toLowerCase().lastIndexOf('</body');
  return at < 0 ? html + block : html.slice(0, at) + block + html.slice(at);
}

/** Hidden preview text at the start of the body; the filler keeps body text out of the inbox preview. */
export function withPreheader(html: string, preheader: string): string {
  const block =
    '<div style="display:none;font-size:1px;color:#ffffff;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all;">' +
    escapeHtml(preheader) +
    '&#847;&zwnj;&nbsp;'.repeat(40) +
    '</div>';
  const open = /<body\b[^>]*>/i.exec(html);
  return open ? html.slice(0, open.index + open[0].length) + block + html.slice(open.index + open[0].length) : block + html;
}

const PIXEL_BEFORE = '<img src="';
const PIXEL_AFTER = '" width="1" height="1" alt="" border="0" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0;">';

/**
 * Adds a slot (value key `key`, between the markup `before` and `after`) just before `</body>`, at
 * the end when there is none: the open-tracking image and the trap link go there.
 */
function withSlotBeforeBody(seg: Segments, before: string, key: string, after: string): Segments {
  const lits = [...seg.lits];
  const keys = [...seg.keys];
  let i = lits.length - 1;
  let at = -1;
  for (; i >= 0; i--) {
    at = lits[i].toLowerCase().lastIndexOf('</body');
    if (at >= 0) break;
  }
  if (i < 0) {
    i = lits.length - 1;
    at = lits[i].length;
  }
  lits.splice(i, 1, lits[i].slice(0, at) + before, after + lits[i].slice(at));
  keys.splice(i, 0, key);
  return { lits, keys };
}

/** Adds the open-tracking image slot (value key `OPEN_PIXEL`) just before `</body>`. */
export const withOpenPixelSlot = (seg: Segments): Segments => withSlotBeforeBody(seg, PIXEL_BEFORE, OPEN_PIXEL, PIXEL_AFTER);

type TextConverter = (html: string) => string;
let converter: Promise<TextConverter> | null = null;

/** html-to-text, compiled once with the options of every text part (loaded on first use). */
function textConverter(): Promise<TextConverter> {
  converter ??= import('html-to-text').then(({ compile }) =>
    compile({
      wordwrap: 78,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
        // Tables marked `data-table` (the receipt's) keep their columns; layout tables stay blocks.
        { selector: 'table.data-table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
      ],
    }),
  );
  return converter;
}

/**
 * The text part, converted once: each placeholder becomes a marker of digits and `%` (which no
 * conversion step changes: not case, not wrapping), and the result is split at the markers.
 */
async function textSegments(html: Segments): Promise<Segments> {
  const nonce = String(randomInt(100_000_000, 999_999_999));
  let marked = html.lits[0];
  for (let i = 0; i < html.keys.length; i++) marked += `%%${nonce}_${i}%%` + html.lits[i + 1];
  // Spacers and empty cells leave lines of blanks; a text reader wants at most one empty line.
  const text = (await textConverter())(marked)
    .replace(/^[ \t\u00a0\u200a\u200b]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const lits: string[] = [];
  const keys: string[] = [];
  let last = 0;
  for (const m of text.matchAll(new RegExp(`%%${nonce}_(\\d+)%%`, 'g'))) {
    lits.push(text.slice(last, m.index!));
    keys.push(html.keys[Number(m[1])]);
    last = m.index! + m[0].length;
  }
  lits.push(text.slice(last));
  return { lits, keys };
}

async function designHtml(design: DesignInput, footer: boolean): Promise<string> {
  if (design.templateJson && design.templateJson.trim() !== '') {
    const doc = parseDesign(design.templateJson);
    return compileMjml(footer ? withFooterMjml(doc) : doc);
  }
  if (design.templateHtml && design.templateHtml.trim() !== '') {
    return footer ? withFooterHtml(design.templateHtml) : design.templateHtml;
  }
  const id = design.templateId ?? BLANK_TEMPLATE_ID;
  const shipped = await findShippedTemplate(id);
  if (!shipped) throw new DesignError('The selected template id is invalid.');
  if (!footer) return shipped.html;
  const doc = withFooterMjml(shipped.doc);
  return doc === shipped.doc ? shipped.html : compileMjml(doc);
}

/**
 * Compiles a design for a mailing: once per single send or automation email, never per recipient.
 * Throws DesignError (a 422 for the caller) when the design cannot be used.
 */
export async function compileDesign(input: CompileInput): Promise<CompiledDesign> {
  let html = await designHtml(input.design, input.footer ?? true);
  // An empty <title> (MJML's default) takes the subject, which some clients show.
  html = html.replace(/<title>\s*<\/title>/i, `<title>${escapeHtml(input.subject)}</title>`);
  // The text part is made before the preheader and pixel go in: neither belongs in it.
  const text = await textSegments(tokenize(html));
  // The text part keeps its links; in the HTML each tracked href becomes a marker, then a slot.
  let links: string[] = [];
  const nonce = String(randomInt(100_000_000, 999_999_999));
  if (input.trackClicks) ({ html, urls: links } = markTrackedLinks(html, (i) => `%%${nonce}_c${i}%%`));
  const preheader = input.preheader?.trim();
  let htmlSeg = tokenize(preheader ? withPreheader(html, preheader) : html);
  if (links.length > 0) htmlSeg = withClickSlots(htmlSeg, new RegExp(`%%${nonce}_c(\\d+)%%`, 'g'));
  // A mail with tracked links also carries the hidden trap link (its value: TRAP_SLOT).
  if (links.length > 0) htmlSeg = withSlotBeforeBody(htmlSeg, TRAP_BEFORE, TRAP_SLOT, TRAP_AFTER);
  if (input.openPixel) htmlSeg = withOpenPixelSlot(htmlSeg);
  const subject = tokenize(input.subject);
  const names = new Set([...subject.keys, ...htmlSeg.keys, ...text.keys]);
  return { subject, html: htmlSeg, text, names, links };
}

/** Turns the link markers left in the literals into slots (value keys `CLICK_SLOT + position`). */
function withClickSlots(seg: Segments, marker: RegExp): Segments {
  const lits: string[] = [];
  const keys: string[] = [];
  let current = '';
  seg.lits.forEach((lit, i) => {
    let last = 0;
    for (const m of lit.matchAll(marker)) {
      lits.push(current + lit.slice(last, m.index!));
      keys.push(CLICK_SLOT + m[1]);
      current = '';
      last = m.index! + m[0].length;
    }
    current += lit.slice(last);
    if (i < seg.keys.length) {
      lits.push(current);
      keys.push(seg.keys[i]);
      current = '';
    }
  });
  lits.push(current);
  return { lits, keys };
}

type Convert = (value: string) => string;
const asIs: Convert = (v) => v;
// A value in a header must not start a new header line.
const oneLine: Convert = (v) => (/[\r\n\u0085\u2028\u2029]/.test(v) ? v.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ') : v);

function join(seg: Segments, values: PlaceholderValues, shared: PlaceholderValues | undefined, convert: Convert): string {
  const { lits, keys } = seg;
  let out = lits[0];
  for (let i = 0; i < keys.length; i++) {
    let v = values[keys[i]];
    if (v === undefined || v === null) v = shared?.[keys[i]];
    if (v !== undefined && v !== null && v !== '') out += convert(typeof v === 'string' ? v : String(v));
    out += lits[i + 1];
  }
  return out;
}

/**
 * Renders one recipient's message: `values` (the recipient's, see recipientValues, plus
 * `unsubscribe_preferences` and `OPEN_PIXEL`) first, then `shared` (senderValues, once per
 * mailing). HTML-escaped in the HTML part, as is in the subject (on one line) and the text part.
 * Unknown and empty placeholders render as empty text.
 */
export function renderFor(compiled: CompiledDesign, values: PlaceholderValues, shared?: PlaceholderValues): RenderedMessage {
  return {
    subject: join(compiled.subject, values, shared, oneLine),
    html: join(compiled.html, values, shared, escapeHtml),
    text: join(compiled.text, values, shared, asIs),
  };
}
