/**
 * The links of a design as a reader of the mail meets them, found by an HTML parser (htmlparser2,
 * never a regular expression over the document), each with what kind of target it has: the web
 * (`http:`/`https:`), a mail or phone link, a placeholder filled per recipient (the service's own
 * unsubscribe link, or a contact's value), or one that goes nowhere in a mail: `#…`, empty, or
 * anything else (a relative path, `javascript:`, `ftp:`, a web address without its scheme).
 */
import { Parser } from 'htmlparser2';

export const LINK_KINDS = ['web', 'mailto', 'tel', 'placeholder', 'anchor', 'empty', 'other'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/** One `<a href>` of a design, in document order. */
export interface DesignLink {
  /** The href as a browser reads it: entities decoded, surrounding blanks trimmed, `((placeholders))` kept. */
  url: string;
  /** Its text (blanks collapsed), else the `alt` of an image inside it, else ''. */
  text: string;
  kind: LinkKind;
}

/** The kinds a mail's link may have; the others go nowhere for its reader. */
export const WORKING_KINDS: ReadonlySet<LinkKind> = new Set(['web', 'mailto', 'tel', 'placeholder']);

/** What kind of target an href names. */
export function linkKind(url: string): LinkKind {
  if (url === '') return 'empty';
  if (url.startsWith('#')) return 'anchor';
  if (/^https?:\/\/[^\s/?#]/i.test(url)) return 'web';
  if (/^mailto:/i.test(url)) return 'mailto';
  if (/^tel:/i.test(url)) return 'tel';
  if (/^\(\(\s*[A-Za-z0-9_]+\s*\)\)/.test(url)) return 'placeholder';
  return 'other';
}

/** Every `<a>` with an `href` (its first one, the one browsers follow) in `html`, in order. */
export function designLinks(html: string): DesignLink[] {
  const links: DesignLink[] = [];
  // The link being read (links do not nest; an `<a>` inside one starts the next), its text and images' alt.
  let open: { url: string; text: string; alt: string } | null = null;
  let tag = '';
  let href: string | null = null;
  const close = () => {
    if (!open) return;
    const text = open.text.replace(/\s+/g, ' ').trim() || open.alt.replace(/\s+/g, ' ').trim();
    links.push({ url: open.url, text, kind: linkKind(open.url) });
    open = null;
  };
  const parser = new Parser(
    {
      onopentagname(name) {
        tag = name;
        href = null;
      },
      onattribute(name, value) {
        if (tag === 'a' && name === 'href' && href === null) href = value.trim();
        if (tag === 'img' && name === 'alt' && open) open.alt += ` ${value}`;
      },
      onopentag(name) {
        if (name !== 'a') return;
        close();
        if (href !== null) open = { url: href, text: '', alt: '' };
      },
      ontext(text) {
        if (open) open.text += text;
      },
      onclosetag(name) {
        if (name === 'a') close();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  close();
  return links;
}
