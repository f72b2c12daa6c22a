/**
 * The MIME side of reading a raw message that came back: mailparser's parse, bounded (at most
 * MAX_MIME_PARTS parts), its failures turned into a 422, and the few things read from its
 * result: the headers of a returned message (attached or inline) and addresses of headers.
 */
import { MailParser, simpleParser, type AddressObject, type Attachment, type ParsedMail } from 'mailparser';
import { AppError } from '../http/errors.js';
import { fieldGroups } from './dsn.js';

/**
 * The most MIME parts (nested ones included) a message may have. A DSN has four or five, with the
 * returned message's own; the cap keeps deep nesting (1,000 `multipart/mixed` in one another) away
 * from the parser's tree and from the walk of it below.
 */
export const MAX_MIME_PARTS = 100;

/** A message the MIME parser gives up on (too many parts, an oversized header block, …): 422, so a relay does not send it again. */
export class UnreadableMail extends AppError {
  constructor(reason: string) {
    super(422, `The message cannot be read: ${reason}.`);
  }
}

/** What the parser is asked for: no HTML conversions, no link detection (none is read); at most MAX_MIME_PARTS parts. */
const PARSER_OPTIONS = {
  keepDeliveryStatus: true,
  maxChildNodes: MAX_MIME_PARTS,
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
} as const;

/** Runs the MIME parser; its failures (all of them caused by the message) become UnreadableMail. */
async function readMime<T>(parse: () => Promise<T>): Promise<T> {
  try {
    return await parse();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UnreadableMail(/child nodes/i.test(message) ? `it has more than ${MAX_MIME_PARTS} MIME parts` : message.replace(/\.$/, ''));
  }
}

/** Parses a raw message (see PARSER_OPTIONS); throws UnreadableMail when the parser gives up on it. */
export function parseMime(raw: Buffer | string): Promise<ParsedMail> {
  return readMime(() => simpleParser(raw, PARSER_OPTIONS));
}

/** The header fields of a returned message or header part: its first group of fields. */
export function returnedHeaders(part: Attachment | undefined): Map<string, string> {
  if (!part) return new Map();
  const text = part.content.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return fieldGroups(end < 0 ? text : text.slice(0, end))[0] ?? new Map();
}

/** A node of mailparser's MIME tree (its internal shape: `headers` and `children`; `showMeta` marks an embedded message's root). */
interface TreeNode {
  headers?: Map<string, unknown>;
  children?: TreeNode[];
  showMeta?: boolean;
}

/** A header value of mailparser's tree as text: an address header's first address, else the text. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const address = value as AddressObject | undefined;
  return address?.value?.[0]?.address ?? address?.text;
}

/** The headers read from an inline returned message. */
const INLINE_HEADERS = ['message-id', 'return-path', 'to', 'x-hmxmroriginalrecipient'];

/**
 * The headers of a returned message sent inline (`message/rfc822` with `Content-Disposition:
 * inline`, as RFC 5965's own example and Outlook.com's complaint reports do): mailparser parses
 * such a part as an embedded message and gives no attachment for it, so its headers are read from
 * the parser's MIME tree (the embedded root is the node it marks `showMeta`). Empty when there is
 * none.
 */
export async function inlineReturnedHeaders(raw: Buffer | string): Promise<Map<string, string>> {
  const parser = new MailParser(PARSER_OPTIONS);
  parser.on('data', (d: { type: string; content?: NodeJS.ReadableStream; release?: () => void }) => {
    if (d.type !== 'attachment') return;
    d.content?.on('end', () => d.release?.());
    d.content?.resume();
  });
  await readMime(
    () =>
      new Promise<void>((resolve, reject) => {
        parser.on('end', resolve);
        parser.on('error', reject);
        parser.end(raw);
      }),
  );
  const find = (node: TreeNode | undefined): TreeNode | undefined =>
    !node ? undefined : node.showMeta && node.headers ? node : (node.children ?? []).map(find).find(Boolean);
  const headers = find((parser as unknown as { tree?: TreeNode }).tree)?.headers;
  const out = new Map<string, string>();
  for (const name of INLINE_HEADERS) {
    const v = headerText(headers?.get(name));
    if (v) out.set(name, v);
  }
  return out;
}

/** The addresses of an address header of the parsed message. */
export function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.flatMap((v) => v.value.flatMap((a) => (a.address ? [a.address] : [])));
}

/** The values of a plain header (`Delivered-To`, `X-Original-To`, …), one or several. */
export function headerValues(mail: ParsedMail, name: string): string[] {
  const v = mail.headers.get(name);
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.flatMap((x) =>
    typeof x === 'string' ? [x] : typeof x === 'object' && x && 'value' in x ? addressesOf(x as AddressObject) : [],
  );
}
