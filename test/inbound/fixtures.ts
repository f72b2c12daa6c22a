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
