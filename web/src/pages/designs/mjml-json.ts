/**
 * MJML text ↔ MJML's JSON form (`{tagName, attributes, children, content}`), the form the API
 * stores in `template_json`. The editor works on MJML text; the API takes and gives JSON.
 *
 * The reading follows MJML's own parser: the "ending tags" (`mj-text`, `mj-button`, …) hold their
 * inner markup as raw `content`, every other element holds elements as `children`; comments and
 * the whitespace between elements are dropped.
 */

export interface MjmlJson {
  tagName: string;
  attributes?: Record<string, string | number | boolean>;
  children?: MjmlJson[];
  content?: string;
}

/** Elements whose inside is markup kept as text (MJML's "ending tags", and the head's text elements). */
const ENDING = new Set([
  'mj-text',
  'mj-button',
  'mj-table',
  'mj-raw',
  'mj-navbar-link',
  'mj-accordion-title',
  'mj-accordion-text',
  'mj-social-element',
  'mj-style',
  'mj-title',
  'mj-preview',
]);

const escapeAttribute = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

const ENTITIES: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>', nbsp: '\u00a0' };

function decodeEntities(v: string): string {
  return v.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** The MJML text of a JSON document (every element closed explicitly, as HTML parsers need). */
export function jsonToMjml(node: MjmlJson): string {
  const attrs = Object.entries(node.attributes ?? {})
    .map(([k, v]) => ` ${k}="${escapeAttribute(String(v))}"`)
    .join('');
  const inner = node.content !== undefined ? node.content : (node.children ?? []).map(jsonToMjml).join('');
  return `<${node.tagName}${attrs}>${inner}</${node.tagName}>`;
}

/** A failure to read MJML text. */
export class MjmlSyntaxError extends Error {}

const TAG_OPEN = /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*(\/?)>/y;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

function readAttributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(ATTRIBUTE)) out[m[1]] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return out;
}

/** The JSON form of MJML text (its root must be one `mjml` element). */
export function mjmlToJson(text: string): MjmlJson {
  let at = 0;
  const lower = text.toLowerCase();
  const skip = () => {
    for (;;) {
      while (at < text.length && /\s/.test(text[at])) at++;
      if (text.startsWith('<!--', at)) {
        const end = text.indexOf('-->', at + 4);
        at = end < 0 ? text.length : end + 3;
      } else if (text.startsWith('<?', at) || text.startsWith('<!', at)) {
        const end = text.indexOf('>', at);
        at = end < 0 ? text.length : end + 1;
      } else return;
    }
  };

  const element = (): MjmlJson => {
    TAG_OPEN.lastIndex = at;
    const m = TAG_OPEN.exec(text);
    if (!m) throw new MjmlSyntaxError(`An element was expected at character ${at}.`);
    at = TAG_OPEN.lastIndex;
    const tagName = m[1].toLowerCase();
    const node: MjmlJson = { tagName, attributes: readAttributes(m[2]) };
    if (m[3] === '/') return node;
    const close = `</${tagName}>`;
    if (ENDING.has(tagName)) {
      const end = lower.indexOf(close, at);
      if (end < 0) throw new MjmlSyntaxError(`<${tagName}> is not closed.`);
      const content = text.slice(at, end).trim();
      if (content !== '') node.content = content;
      at = end + close.length;
      return node;
    }
    const children: MjmlJson[] = [];
    for (;;) {
      skip();
      if (at >= text.length) throw new MjmlSyntaxError(`<${tagName}> is not closed.`);
      if (text.startsWith('</', at)) {
        const end = text.indexOf('>', at);
        const name = text
          .slice(at + 2, end < 0 ? text.length : end)
          .trim()
          .toLowerCase();
        if (name !== tagName) throw new MjmlSyntaxError(`</${name}> closes <${tagName}>.`);
        at = end + 1;
        break;
      }
      if (text[at] !== '<') {
        // Loose text between elements (MJML ignores it outside the ending tags).
        const next = text.indexOf('<', at);
        at = next < 0 ? text.length : next;
        continue;
      }
      children.push(element());
    }
    if (children.length) node.children = children;
    return node;
  };

  skip();
  const root = element();
  skip();
  if (at < text.length) throw new MjmlSyntaxError('Text after the closing </mjml>.');
  if (root.tagName !== 'mjml') throw new MjmlSyntaxError('The root element must be <mjml>.');
  return root;
}
