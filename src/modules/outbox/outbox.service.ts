import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Parser } from 'htmlparser2';
import { simpleParser } from 'mailparser';
import type { AppDeps } from '../../deps.js';
import { outboxFileStem } from '../../delivery/transports.js';
import { newestSent } from './outbox.queries.js';

/** A mail file is read up to this size: the viewer shows a mail's head and links, not attachments. */
const MAX_FILE = 1 << 20;
const MAX_TEXT = 4000;

/** The `href`s of an HTML body, in order, each once. */
function linksOf(html: string): string[] {
  const links = new Set<string>();
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'a' && attrs.href) links.add(attrs.href);
    },
  });
  parser.end(html);
  return [...links];
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(MAX_FILE);
    const { bytesRead } = await handle.read(buffer, 0, MAX_FILE, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Where the account's mail goes and, while it goes to the outbox folder, its newest mails there:
 * the account's newest sent messages (never people's access mail), each matched to its `.eml`
 * file by the Message-ID the file is named after, parsed with its links decoded.
 */
export async function outbox({ config, database: { db } }: AppDeps, userId: number, limit: number) {
  if (config.smtpUrl) return { mode: 'smtp' as const, folder: null, mails: [] };
  const sent = await newestSent(db, userId, limit);
  const names = sent.length ? await readdir(config.outboxDir).catch(() => [] as string[]) : [];
  const byStem = new Map(names.filter((n) => n.endsWith('.eml')).map((n) => [n.slice(n.indexOf('-') + 1, -'.eml'.length), n]));
  const mails = [];
  for (const row of sent) {
    const file = byStem.get(outboxFileStem(row.message_id!));
    if (!file) continue;
    const mail = await simpleParser(await readHead(join(config.outboxDir, file)));
    mails.push({
      id: Number(row.id),
      kind: row.kind,
      to: row.email,
      subject: mail.subject ?? '',
      sent_at: row.sent_at ?? '',
      file,
      links: typeof mail.html === 'string' ? linksOf(mail.html) : [],
      text: (mail.text ?? '').slice(0, MAX_TEXT),
    });
  }
  return { mode: 'outbox' as const, folder: config.outboxDir, mails };
}
