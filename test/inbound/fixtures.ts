import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a fixture names: the recipient, our VERP address, the original Message-ID (bare) and sender. */
export interface FixtureValues {
  rcpt: string;
  verp: string;
  messageId: string;
  from?: string;
}

/** A fixture of test/inbound/fixtures with its placeholders filled, as raw mail with CRLF line ends. */
export function fixture(name: string, v: FixtureValues): Buffer {
  const text = readFileSync(join(import.meta.dirname, 'fixtures', `${name}.eml`), 'utf8')
    .replaceAll('{{RCPT}}', v.rcpt)
    .replaceAll('{{VERP}}', v.verp)
    .replaceAll('{{MESSAGE_ID}}', v.messageId)
    .replaceAll('{{FROM}}', v.from ?? 'news@acme.example');
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}

/** A message of `depth` `multipart/mixed` parts, each nested in the one before, around one text part. */
export function nestedMultipart(depth: number): Buffer {
  let part = 'Content-Type: text/plain\r\n\r\nThis is the qmail-send program.\r\n';
  for (let i = depth; i > 0; i--) part = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${part}\r\n--b${i}--\r\n`;
  return Buffer.from(`From: MAILER-DAEMON@mail.example.org\r\nSubject: failure notice\r\nMIME-Version: 1.0\r\n${part}`);
}
