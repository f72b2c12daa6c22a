/** What the relay webhook tests share: a raw POST through the app (checked against the document) and a log catcher. */
import { Writable } from 'node:stream';
import { checkAgainstDocument, type Response } from '../helpers.js';
import type { App } from '../../src/app.js';

/** POSTs `body` as sent (bytes or text) with `headers`, no keys; the answer is checked against the OpenAPI document. */
export async function postRaw(app: App, url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
  const res = await app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json', ...headers } });
  checkAgainstDocument(app, 'POST', url, res);
  let parsed: unknown;
  try {
    parsed = res.json();
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text: res.body };
}

/** A logger option that keeps the app's log lines (debug and up), and the `relay event` lines among them. */
export function logCatcher() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return {
    logger: { level: 'debug', stream },
    lines,
    /** The eventKeys of the events taken in since the last call. */
    takeKeys(): unknown[] {
      const keys = lines.filter((l) => l.msg === 'relay event').map((l) => l.eventKey);
      lines.length = 0;
      return keys;
    },
  };
}
