import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { make, setup, type TestContext } from '../helpers.js';

// The CSV upload writes its file under the temporary folder: a private one shows what is left.
const TMP = mkdtempSync(join(tmpdir(), 'campaign-limits-'));
process.env.TMPDIR = TMP;

const MB = 1024 * 1024;
const TOO_LARGE = { status: 'failed', errors: 'The request body is too large.' };

interface Answer {
  status: number;
  body: any;
  connection: string | undefined;
  /** Whether the server said 100 Continue. */
  continued: boolean;
  /** Body bytes the client had written when the answer arrived, of `total`. */
  sentBeforeAnswer: number;
}

interface Upload {
  path: string;
  contentType: string;
  /** Bytes of body after `head`: `fill` repeated. */
  size: number;
  head?: string;
  fill?: string;
  expect?: boolean;
  /** Send no Content-Length (chunked) so only the streamed bytes tell the size. */
  chunked?: boolean;
  keys?: boolean;
}

describe('bodies over the limit, over a real connection', () => {
  let t: TestContext;
  let port: number;
  let typeId: number;
  before(async () => {
    t = await setup({ maxCsvBytes: MB });
    typeId = await make.contactType(t.a, 'Limits');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await t.close();
    rmSync(TMP, { recursive: true, force: true });
  });

  /**
   * Sends `head` + `size` bytes as fast as the connection takes them (after 100 Continue when
   * `expect`), and resolves with the answer; rejects if the connection fails before one arrives.
   */
  function send(u: Upload): Promise<Answer> {
    const head = Buffer.from(u.head ?? '');
    const headers: Record<string, string | number> = { 'content-type': u.contentType };
    if (u.keys !== false) Object.assign(headers, { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key });
    if (!u.chunked) headers['content-length'] = head.length + u.size;
    if (u.expect) headers.expect = '100-continue';
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: u.path, method: 'POST', headers, agent: false });
      const chunk = Buffer.from((u.fill ?? 'a').repeat(Math.ceil(65536 / (u.fill ?? 'a').length)).slice(0, 65536));
      let sent = 0;
      let continued = false;
      let answered = false;
      const pump = () => {
        if (sent === 0 && head.length > 0) req.write(head);
        while (sent < u.size && !answered) {
          const piece = chunk.subarray(0, Math.min(chunk.length, u.size - sent));
          sent += piece.length;
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      req.on('continue', () => {
        continued = true;
        pump();
      });
      req.on('response', (res) => {
        answered = true;
        const sentBeforeAnswer = sent;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, body: JSON.parse(text), connection: res.headers.connection, continued, sentBeforeAnswer });
        });
      });
      req.on('error', (err) => {
        if (!answered) reject(new Error(`no answer, the connection failed after ${sent} bytes: ${err.message}`));
      });
      if (!u.expect) pump();
    });
  }

  const json = { path: '/contacts-type/add', contentType: 'application/json', head: '{"name":"', size: 40 * MB };
  const form = { path: '/contacts-type/add', contentType: 'application/x-www-form-urlencoded', head: 'name=', size: 40 * MB };

  it('answers a too large Content-Length with 413 at once, without Expect: 100-continue', async () => {
    for (const u of [json, form]) {
      const r = await send(u);
      assert.deepEqual([r.status, r.body, r.connection], [413, TOO_LARGE, 'close'], u.contentType);
      assert.ok(r.sentBeforeAnswer < u.size, `answered after all ${r.sentBeforeAnswer} bytes`);
    }
  });

  it('answers a too large Content-Length with 413 instead of 100 Continue', async () => {
    for (const u of [json, form]) {
      const r = await send({ ...u, expect: true });
      assert.deepEqual([r.status, r.body, r.continued, r.sentBeforeAnswer], [413, TOO_LARGE, false, 0], u.contentType);
    }
  });

  it('answers 413 once a chunked body passes the limit, and the client still reads it', async () => {
    for (const expect of [false, true]) {
      for (const u of [json, form]) {
        const r = await send({ ...u, chunked: true, expect });
        assert.deepEqual([r.status, r.body, r.connection], [413, TOO_LARGE, 'close'], `${u.contentType} expect=${expect}`);
        assert.ok(r.sentBeforeAnswer < u.size, `answered after all ${r.sentBeforeAnswer} bytes`);
      }
    }
  });

  it('still says 100 Continue to a body within the limit, and reads it', async () => {
    const r = await send({
      path: '/contacts-type/add',
      contentType: 'application/x-www-form-urlencoded',
      head: 'name=Continued',
      size: 0,
      expect: true,
    });
    assert.equal(r.continued, true);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const big = await send({ ...form, head: 'name=Big&pad=', size: 9 * MB, expect: true });
    assert.equal(big.status, 200, JSON.stringify(big.body));
  });

  it('answers a request without keys with 401 before asking for its body', async () => {
    const r = await send({ ...json, keys: false, expect: true });
    assert.deepEqual([r.status, r.continued, r.sentBeforeAnswer], [401, false, 0]);
  });

  const csvHead = (id: number) =>
    `--x\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${id}\r\n` +
    `--x\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\nemail,country\n`;

  it('answers a CSV upload over MAX_CSV_MB with 413, with or without Expect, and stores nothing of it', async () => {
    const csv = {
      path: '/contacts/upload-csv',
      contentType: 'multipart/form-data; boundary=x',
      head: csvHead(typeId),
      fill: 'big@example.com,101\n',
    };
    // Declared: the file plus room for the fields (10 MB) is the most the route reads.
    for (const expect of [false, true]) {
      const r = await send({ ...csv, size: 20 * MB, expect });
      assert.deepEqual([r.status, r.body], [413, TOO_LARGE], `declared, expect=${expect}`);
      assert.ok(r.sentBeforeAnswer < 20 * MB);
    }
    // Streamed: the file part itself passes MAX_CSV_MB (1 MB here).
    for (const expect of [false, true]) {
      const r = await send({ ...csv, size: 20 * MB, chunked: true, expect });
      assert.deepEqual(
        [r.status, r.body],
        [413, { status: 'failed', errors: 'The file must not be greater than 1024 kilobytes.' }],
        `streamed, expect=${expect}`,
      );
      assert.ok(r.sentBeforeAnswer < 20 * MB);
    }
    const stored = await t.database.db.selectFrom('contacts').select('id').where('email', '=', 'big@example.com').execute();
    assert.deepEqual(stored, []);
    assert.deepEqual(
      readdirSync(TMP).filter((f) => f.startsWith('campaign-import-')),
      [],
    );
    // A file within the limit still imports.
    const ok = await send({ ...csv, head: csvHead(typeId) + 'small@example.com,101\r\n--x--\r\n', size: 0, expect: true });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('keeps serving after the oversized requests', async () => {
    const r = await t.a.get('/contacts-type', { page: 1 });
    assert.equal(r.status, 200);
    const res = await fetch(`http://127.0.0.1:${port}/contacts-type`, {
      headers: { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key, connection: 'close' },
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).status, 'success');
  });
});
