import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTokens } from '../../src/util/tokens.js';
import { uniqueEmail, linkIn, sendersSuite } from './senders.helpers.js';

/**
 * The security headers of a public HTML page, as the unsubscribe pages send them: a strict policy
 * allowing no script and only the page's own style block (by its hash), never framed, no referrer
 * (the URL carries the token), never cached, no sniffing.
 */
function assertSecurityHeaders(res: { headers: Record<string, unknown>; body: string }) {
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  const csp = String(res.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /base-uri 'none'/);
  assert.doesNotMatch(csp, /script-src|unsafe/);
  const style = /<style>([^<]*)<\/style>/.exec(res.body)?.[1];
  assert.ok(style !== undefined, 'one style block');
  assert.ok(csp.includes(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`), "the CSP allows the page's style");
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['set-cookie'], undefined);
}

describe('senders: verification', () => {
  const suite = sendersSuite();
  const { saveSender, details, open } = suite;

  it('answers the verification page, verified or refused, with the security headers of every public page', async () => {
    const { mail } = await saveSender();
    const path = linkIn(mail);
    const verified = await open(path);
    assert.equal(verified.statusCode, 200);
    assertSecurityHeaders(verified);
    const invalid = await open('/sender/verify?token=forged');
    assert.equal(invalid.statusCode, 400);
    assertSecurityHeaders(invalid);
    const missing = await open('/sender/verify');
    assert.equal(missing.statusCode, 400);
    assertSecurityHeaders(missing);
    const gone = await saveSender();
    assert.equal((await suite.t.a.delete('/sender/delete', { sender_id: gone.id })).status, 200);
    const deleted = await open(linkIn(gone.mail));
    assert.equal(deleted.statusCode, 404);
    assertSecurityHeaders(deleted);
  });

  it('verifies the sender through the mailed link and shows an escaped HTML page', async () => {
    const { id, mail } = await saveSender(suite.t.a, { from_name: '<script>alert(1)</script> & Co' });
    const res = await open(linkIn(mail));
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /Sender verified/);
    assert.ok(!res.body.includes('<script>alert(1)'), 'the name is escaped');
    assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co'));
    assert.equal((await details(id)).is_verified, 1);
    const again = await open(linkIn(mail));
    assert.equal(again.statusCode, 200, 'opening the link twice is harmless');
  });

  it('verifies nothing with a forged, altered, foreign-purpose or expired token', async () => {
    const { id, mail } = await saveSender();
    const path = linkIn(mail);
    const token = decodeURIComponent(path.split('token=')[1]);
    const [body, mac] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const [payload] = JSON.parse(Buffer.from(body, 'base64url').toString());
    const tokens = createTokens('test-secret');
    const bad = [
      'forged',
      '',
      `${flip(body, 3)}.${mac}`,
      `${body}.${flip(mac, 5)}`,
      `${body}.${flip(mac, mac.length - 1)}`,
      `${body}.${mac}.x`,
      createTokens('another-secret').sign('sender-verify', payload),
      tokens.sign('open-tracking', payload),
      tokens.sign('sender-verify', payload, { expiresInSeconds: -1 }),
      tokens.sign('sender-verify', { ...payload, s: payload.s + 1 }),
    ];
    for (const tok of bad) {
      const res = await open(`/sender/verify?token=${encodeURIComponent(tok)}`);
      assert.equal(res.statusCode === 400 || res.statusCode === 404, true, `${tok}: ${res.statusCode}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /invalid/i);
    }
    assert.equal((await open('/sender/verify')).statusCode, 400);
    assert.equal((await details(id)).is_verified, 0);
    assert.equal((await open(path)).statusCode, 200, 'the genuine link still works');
  });

  it('allows one verification mail per minute per sender, counting the one sent on save', async () => {
    const { id, form } = await saveSender();
    const soon = await suite.t.a.get('/sender/resend-mail', { sender_id: id });
    assert.equal(soon.status, 429);
    assert.equal(soon.body.status, 'failed');
    assert.match(soon.body.errors, /^A verification mail was sent less than a minute ago\. Try again in \d+ seconds\.$/);
    const retry = Number(soon.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    // A minute later (moved back in the database rather than waited for):
    await suite.t.database.db.updateTable('senders').set({ send_at: '2000-01-01 00:00:00' }).where('id', '=', id).execute();
    suite.sink.clear();
    const r = await suite.t.a.get('/sender/resend-mail', { sender_id: id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Verification Mail Send' });
    await suite.drain();
    const mail = await suite.sink.waitFor((m) => m.envelope.to.includes(form.from_email));
    assert.notEqual((await details(id)).send_at, '2000-01-01 00:00:00');
    assert.equal((await suite.t.a.get('/sender/resend-mail', { sender_id: id })).status, 429);
    assert.equal((await open(linkIn(mail))).statusCode, 200);
  });

  it('resets verification and mails a new link when from_email changes; the old link stops working', async () => {
    const { id, form, mail } = await saveSender();
    assert.equal((await open(linkIn(mail))).statusCode, 200);
    const same = await suite.t.a.post('/sender/update', {
      sender_id: id,
      ...form,
      from_name: 'Renamed',
      from_email: form.from_email.toUpperCase(),
    });
    assert.deepEqual(same.body, { status: 'success', message: 'Updated Successfully' });
    assert.equal((await details(id)).is_verified, 1, 'same address (any case): still verified');
    const newEmail = uniqueEmail('moved');
    const r = await suite.t.a.post('/sender/update', { sender_id: id, ...form, from_email: newEmail });
    assert.equal(r.status, 200);
    const s = await details(id);
    assert.equal(s.is_verified, 0);
    assert.equal(s.from_email, newEmail);
    assert.equal(s.from_name, 'Acme News');
    await suite.drain();
    const fresh = await suite.sink.waitFor((m) => m.envelope.to.includes(newEmail));
    const old = await open(linkIn(mail));
    assert.equal(old.statusCode, 404);
    assert.equal((await details(id)).is_verified, 0);
    assert.equal((await open(linkIn(fresh))).statusCode, 200);
    assert.equal((await details(id)).is_verified, 1);
  });

  it("mails the account's notification recipients when a sender is verified, once", async () => {
    const owner = uniqueEmail('owner');
    const otherOwner = uniqueEmail('other-owner');
    assert.equal((await suite.t.a.post('/notification-recipient/save', { email_address: owner, email_owner: 'Olga' })).status, 200);
    assert.equal((await suite.t.b.post('/notification-recipient/save', { email_address: otherOwner, email_owner: 'Bob' })).status, 200);
    const { form, mail } = await saveSender();
    await open(linkIn(mail));
    await suite.drain();
    const note = await suite.sink.waitFor((m) => m.envelope.to.includes(owner));
    assert.equal(note.subject, '[Campaign API] Sender verified');
    assert.match(note.text!, /Hello Olga,/);
    assert.ok(note.text!.includes(`from_email: ${form.from_email}`));
    assert.ok(note.html!.includes(form.from_email));
    await open(linkIn(mail));
    await suite.drain();
    assert.equal(suite.sink.to(owner).length, 1, 'a second opening does not notify again');
    assert.equal(suite.sink.to(otherOwner).length, 0, 'another account is not told');
  });
});
