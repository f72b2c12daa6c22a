import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drainQueue, setup, setupWithSink, type TestContext } from '../../helpers.js';
import { senderForm } from '../senders.helpers.js';
import { person, personRefused } from '../access/sessions.helpers.js';

describe('GET /outbox: the mails written to the outbox folder', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it("lists the newest mails of the account, links decoded, and never another account's or an access mail", async () => {
    const empty = await t.a.get('/outbox');
    assert.deepEqual(empty.body, { status: 'success', message: { mode: 'outbox', folder: t.config.outboxDir, mails: [] } });

    const form = senderForm();
    assert.equal((await t.a.post('/sender/save', form)).status, 200);
    const other = senderForm();
    assert.equal((await t.b.post('/sender/save', other)).status, 200);
    assert.equal((await t.a.post('/users/invite', { email: 'invited@example.com', role: 'viewer' })).status, 200);
    await drainQueue(t);

    const files = readdirSync(t.config.outboxDir).filter((n) => n.endsWith('.eml'));
    assert.ok(files.length >= 3, files.join(' '));
    // The verification link is quoted-printable in the file: wrapped at 76 characters with `=` soft breaks.
    const raw = files.map((n) => readFileSync(join(t.config.outboxDir, n), 'utf8')).find((text) => text.includes(form.from_email))!;
    assert.match(raw, /=\r\n/);

    const r = await t.a.get('/outbox');
    assert.equal(r.status, 200, r.text);
    const { mode, mails } = r.body.message;
    assert.equal(mode, 'outbox');
    assert.deepEqual(
      mails.map((m: { to: string }) => m.to),
      [form.from_email],
      "the sender verification mail only: not account B's, not the invitation",
    );
    const [mail] = mails;
    assert.equal(mail.kind, 'system');
    assert.ok(mail.subject.length > 0);
    assert.ok(files.includes(mail.file));
    const verify = mail.links.find((l: string) => l.includes('/sender/verify?token='));
    assert.ok(verify, JSON.stringify(mail.links));
    // The decoded link works as it is: it verifies the sender.
    const page = await t.app.inject({ method: 'GET', url: verify.replace('http://localhost:3000', '') });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Sender verified/);

    assert.deepEqual(
      (await t.b.get('/outbox')).body.message.mails.map((m: { to: string }) => m.to),
      [other.from_email],
    );
    assert.equal((await t.a.get('/outbox', { limit: 0 })).status, 422);
  });

  it('is for those who may change settings: an editor is refused', async () => {
    const editor = await person(t, 'editor');
    const r = await editor.get('/outbox');
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, personRefused('settings.write'));
  });
});

describe('GET /outbox with an SMTP server', () => {
  let t: TestContext;
  before(async () => {
    t = await setupWithSink();
  });
  after(() => t.close());

  it('says mail goes out and lists nothing', async () => {
    assert.equal((await t.a.post('/sender/save', senderForm())).status, 200);
    await drainQueue(t);
    assert.deepEqual((await t.a.get('/outbox')).body, { status: 'success', message: { mode: 'smtp', folder: null, mails: [] } });
  });
});
