/**
 * Click tracking's part of compiling a design: which links of the HTML are tracked, found by an
 * HTML parser (htmlparser2), never by a regular expression over the document. Run once per
 * compiled design; the per-recipient step only joins strings into the slots left here.
 */
import { Parser } from 'htmlparser2';
import { TOKEN } from './placeholders.js';

/** The value key prefix of a tracked link's slot: `#click_0`, `#click_1`, … (by position). */
export const CLICK_SLOT = '#click_';

/** Placeholders whose links are the service's own (preferences / unsubscribe): never tracked. */
const OWN_LINKS = new Set(['unsubscribe_preferences']);

/** The placeholder names (lower case) in a text. */
function placeholderNames(text: string): string[] {
  return [...text.matchAll(TOKEN)].map((m) => m[1].toLowerCase());
}

/**
 * Whether an `<a href>` value is tracked: an absolute `http:` or `https:` URL (as a browser reads
 * it, surrounding blanks ignored) that is not the service's own unsubscribe/preferences link.
 * Hrefs made only of a placeholder (`((website))`), `mailto:`, `tel:`, anchors and relative
 * links are left alone: their scheme is not known to be the web's.
 */
export function isTrackedHref(url: string): boolean {
  return /^https?:/i.test(url) && !placeholderNames(url).some((n) => OWN_LINKS.has(n));
}

/** What `markTrackedLinks` gives back. */
export interface MarkedLinks {
  /** The HTML with each tracked `href` attribute replaced by `href="<marker(position)>"`. */
  html: string;
  /** The distinct tracked URLs, in order of first appearance (index = position). */
  urls: string[];
}

/**
 * Replaces the `href` of every tracked `<a>` (its first `href`, the one browsers follow) with a
 * marker naming the link's position, leaving every other byte of the HTML as it was. A URL that
 * appears several times is one link (one position). Comments (including Outlook's conditional
 * ones), `<script>` and `<style>` contents are not markup to the parser and are left alone. The
 * URLs are the attribute values as a browser reads them: entities decoded, surrounding blanks
 * trimmed, `((placeholders))` kept.
 */
export function markTrackedLinks(html: string, marker: (position: number) => string): MarkedLinks {
  const spans: Array<{ start: number; end: number; position: number }> = [];
  const positions = new Map<string, number>();
  let tag = '';
  let sawHref = false;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        tag = name;
        sawHref = false;
      },
      onattribute(name, value) {
        if (tag !== 'a' || name !== 'href' || sawHref) return;
        sawHref = true;
        const url = value.trim();
        if (!isTrackedHref(url)) return;
        let position = positions.get(url);
        if (position === undefined) {
          position = positions.size;
          positions.set(url, position);
        }
        // The attribute's source text is [startIndex, endIndex): name, `=`, quotes and value.
        spans.push({ start: parser.startIndex, end: parser.endIndex, position });
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  if (spans.length === 0) return { html, urls: [] };
  let out = '';
  let last = 0;
  for (const s of spans) {
    out += html.slice(last, s.start) + `href="${marker(s.position)}"`;
    last = s.end;
  }
  out += html.slice(last);
  return { html: out, urls: [...positions.keys()] };
}
