import { Parser } from 'htmlparser2';

/** Every `<a href>` of an HTML document, in order, read by a parser. */
export function hrefsOf(html: string): string[] {
  const out: string[] = [];
  let tag = '';
  new Parser({
    onopentagname: (n) => (tag = n),
    onattribute: (name, value) => {
      if (tag === 'a' && name === 'href') out.push(value);
    },
  }).end(html);
  return out;
}
