import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser, type ParsedMail } from 'mailparser';
import { drainQueue } from '../helpers.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { compiledDesignsCached } from '../../src/delivery/campaign-mail.js';
import { compiledFor, renderSingleSendBatch, singleSendGroups } from '../../src/modules/single-sends/message.js';
import { skipsAmong } from '../../src/suppression/suppression.reads.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import type { SinkMessage } from '../support/smtp-sink.js';
import {
  createSend,
  details,
  group,
  messagesOf,
  sendForm,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

const DESIGN =
  '<html><head><title></title></head><body><p>Dear ((first_name)) ((last_name))</p><p>Yours, ((sender_name))</p></body></html>';

describe('single sends: delivered end to end through the queue to a real SMTP server', () => {
  let t: SendsContext;
  let links: ReturnType<typeof trackingLinks>;
  let utr: string;
  let senderEmail: string;
  let base: { sender: number; group: number; type: number };
  const got = new Map<string, { sink: SinkMessage; mail: ParsedMail }>();

  before(async () => {
    t = await setupSends({ sink: true });
    links = trackingLinks(t.config);
    const { type } = await typeWith(t.a, [
      ['tom@example.com', '<b>Tom & "Jerry"</b>'],
      ['ann@example.com', 'Ann'],
      ['gone@example.com', 'Gone'],
      ['bounce@example.com', 'Bounce'],
    ]);
    const seg = await t.a.post('/segment/create', {
      segment_name: 'Hand',
      contact_type_id: type,
      select_field: ['email'],
      select_operator: ['is'],
      value: ['nobody@example.com'],
    });
    assert.equal(seg.status, 200, seg.text);
    assert.equal(
      (
        await t.a.post('/segment/email/store', {
          segment_id: seg.body.id,
          first_name: 'Hanna',
          last_name: 'Hand',
          email: 'hanna@example.com',
        })
      ).status,
      200,
    );
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    senderEmail = (await t.a.get('/sender/details', { sender_id: base.sender })).body.message.sender.from_email;
    utr = await createSend(
      t.a,
      sendForm(base, {
        template_html: DESIGN,
        subject: 'Hi ((first_name))',
        recipient_id: [`contacts_${type}`, `segments_${seg.body.id}`],
      }),
    );
    t.sink!.reject('bounce@example.com', 550, { text: '5.1.1 <bounce@example.com>: user unknown' });
    // The send starts (its recipients are resolved), then one of them unsubscribes before the worker sends.
    await startDueSends(t.deps, t.clock.now());
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: 'gone@example.com' })).status, 200);
    t.clock.advance(2000);
    await drainQueue(t);
    for (const address of ['tom@example.com', 'ann@example.com', 'hanna@example.com']) {
      const [sink] = t.sink!.to(address);
      assert.ok(sink, `a mail reached ${address}`);
      got.set(address, { sink, mail: await simpleParser(sink.raw) });
    }
  });
  after(() => t.close());

  const rowOf = async (email: string) => (await messagesOf(t, utr)).find((m) => m.email_key === email)!;

  test('each recipient gets one mail; the unsubscribed and the refused address none', async () => {
    for (const address of ['tom@example.com', 'ann@example.com', 'hanna@example.com']) assert.equal(t.sink!.to(address).length, 1, address);
    assert.equal(t.sink!.to('gone@example.com').length, 0);
    assert.equal(t.sink!.to('bounce@example.com').length, 0);
    assert.equal((await rowOf('gone@example.com')).state, 'suppressed');
    assert.equal((await rowOf('bounce@example.com')).state, 'bounced');
  });

  test('headers: From and Reply-To of the sender, a unique and stable Message-ID, List-Unsubscribe with one-click', async () => {
    const ids = new Set<string>();
    for (const [address, { sink, mail }] of got) {
      assert.deepEqual(mail.from!.value, [{ name: 'Acme News', address: senderEmail }]);
      assert.deepEqual(
        mail.replyTo!.value.map((v) => v.address),
        ['replies@example.com'],
      );
      assert.match(mail.messageId!, /^<[\w-]{24}\.\d+@mail\.example\.test>$/);
      ids.add(mail.messageId!);
      const row = await rowOf(address);
      // Derived from the row: a copy sent again after a crash carries the same Message-ID.
      assert.equal(mail.messageId, `<${links.messageId(row.id)}>`);
      const m = /^<https:\/\/mail\.example\.test\/u\/([^>]+)>, <mailto:replies@example\.com\?subject=unsubscribe%20([^>]+)>$/.exec(
        sink.header('list-unsubscribe') ?? '',
      );
      assert.ok(m, sink.header('list-unsubscribe'));
      assert.equal(links.readUnsubscribeToken(m[1]), row.id);
      assert.equal(links.readUnsubscribeToken(decodeURIComponent(m[2])), row.id);
      assert.equal(sink.header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    }
    assert.equal(ids.size, 3);
  });

  test('personalised: raw in the subject and text, HTML-escaped in the HTML; hand-added recipients by their names', () => {
    const tom = got.get('tom@example.com')!.mail;
    assert.equal(tom.subject, 'Hi <b>Tom & "Jerry"</b>');
    assert.ok(tom.html && tom.html.includes('Dear &lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;/b&gt; Lovelace'), 'escaped in html');
    assert.ok(!(tom.html as string).includes('<b>Tom'), 'no markup injected');
    assert.match(tom.text!, /Dear <b>Tom & "Jerry"<\/b> Lovelace/);
    assert.match(tom.text!, /Yours, Acme News/);
    const hanna = got.get('hanna@example.com')!.mail;
    assert.equal(hanna.subject, 'Hi Hanna');
    assert.match(hanna.text!, /Dear Hanna Hand/);
  });

  test('preheader hidden in the HTML only; footer with the postal address and unsubscribe link; the open pixel', async () => {
    for (const [address, { mail }] of got) {
      const html = mail.html as string;
      assert.match(html, /<div style="display:none;[^"]*">What is new this spring/);
      assert.ok(!mail.text!.includes('What is new this spring'), 'no preheader in the text part');
      const row = await rowOf(address);
      assert.ok(html.includes('1 Main Street, Floor 2'), 'postal address in the footer');
      assert.ok(html.includes(`href="${links.unsubscribeUrl(row.id)}"`), 'unsubscribe link in the footer');
      assert.ok(mail.text!.includes('1 Main Street, Floor 2'), 'footer in the text part too');
      const pixel = /<img src="https:\/\/mail\.example\.test\/t\/open\/([^"]+)\.gif" width="1" height="1"/.exec(html);
      assert.ok(pixel, 'an open pixel');
      assert.equal(links.readOpenToken(pixel[1]), row.id);
    }
  });

  test('statistics: triggered, delivered, bounces, status 3 and sent_at; the completion notification mailed', async () => {
    const d = await details(t.a, utr);
    assert.deepEqual([d.status, d.triggered, d.delivered, d.bounces, d.unique_opens], [3, 5, 3, 1, 0]);
    assert.equal(d.sent_at, '2030-01-15 10:00:02');
    const note = await t.sink!.waitFor((m) => m.envelope.to.includes('boss@example.com') && /Single send completed/.test(m.subject));
    assert.ok(note.text?.includes(utr));
  });

  test('unique_open_token maps each recipient who opened to its open token', async () => {
    const ann = await rowOf('ann@example.com');
    await t.database.db.updateTable('mail_messages').set({ opens: 2 }).where('id', '=', ann.id).execute();
    const d = await details(t.a, utr);
    assert.deepEqual(d.unique_open_token, { 'ann@example.com': links.openToken(ann.id) });
    const listed = (await t.a.get('/single-send/list')).body.message.singleSends.find((s: any) => s.utr === utr);
    assert.deepEqual(listed.unique_open_token, d.unique_open_token);
  });

  test('the next send skips the unsubscribed and the hard-bounced address', async () => {
    const next = await createSend(t.a, sendForm(base, { template_html: DESIGN }));
    await startDueSends(t.deps, t.clock.now());
    assert.deepEqual(
      (await messagesOf(t, next)).map((m) => m.email_key),
      ['ann@example.com', 'tom@example.com'],
    );
  });

  test('a design is compiled once per send and kept, at most 32 sends at a time', async () => {
    const row = await t.database.db.selectFrom('single_sends').selectAll().where('utr', '=', utr).executeTakeFirstOrThrow();
    const { db } = t.database;
    assert.equal(compiledFor(db, row), compiledFor(db, row), 'the same compiled design for every batch of the send');
    const first = compiledFor(db, { ...row, id: 1_000_000 });
    for (let i = 1; i <= 40; i++) await compiledFor(db, { ...row, id: 1_000_000 + i });
    assert.equal(compiledDesignsCached(db), 32);
    assert.notEqual(compiledFor(db, { ...row, id: 1_000_000 }), first, 'the oldest entry was evicted');
  });

  test('at send time: an unsubscribe from the group stops the message in the batch check; at render, a deleted contact suppresses, a deleted send cancels', async () => {
    const { type, ids } = await typeWith(t.a, [['late1@example.com'], ['late2@example.com'], ['late3@example.com']]);
    const later = await createSend(t.a, sendForm({ ...base, type }, { template_html: DESIGN }));
    await startDueSends(t.deps, t.clock.now());
    await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: base.group, email_address: 'LATE1@example.com' });
    await t.a.delete('/contacts/delete', { contact_id: ids[1] });
    const rows = await messagesOf(t, later);
    const groups = await singleSendGroups(t.database.db, rows);
    assert.deepEqual(groups, [base.group, base.group, base.group]);
    const lists = rows.map((r, i) => ({ user_id: r.user_id, email_key: r.email_key, lists: { group: groups[i] } }));
    assert.deepEqual(await skipsAmong(t.database.db, lists, t.config.appSecret), ['unsubscribed_from_group', null, null]);
    // The renderer no longer checks unsubscribes (the batch check ran before it); the deleted contact is its own.
    const out = await renderSingleSendBatch(t.deps, rows);
    assert.deepEqual(
      out.map((o) => ('skip' in o ? o.skip : 'message')),
      ['message', 'suppressed', 'message'],
    );
    assert.equal((await t.a.delete('/single/send/delete', { utr: later })).status, 200);
    const cancelled = await renderSingleSendBatch(t.deps, rows);
    assert.deepEqual(
      cancelled.map((o) => ('skip' in o ? o.skip : 'message')),
      ['cancelled', 'cancelled', 'cancelled'],
    );
  });

  test('a reply-to address holding URI delimiters reaches the List-Unsubscribe mailto percent-encoded, read back exactly', async () => {
    const replyTo = 'a?subject=x&b=%41#c/d@example.org';
    const sender = await verifiedSender(t, t.a, { reply_to_email: replyTo });
    const { type } = await typeWith(t.a, [['mailto@example.com']]);
    const sent = await createSend(t.a, sendForm({ ...base, sender, type }, { template_html: DESIGN }));
    t.clock.advance(1000);
    await drainQueue(t);
    const [sink] = t.sink!.to('mailto@example.com');
    assert.ok(sink, 'the mail arrived');
    const mail = await simpleParser(sink.raw);
    assert.deepEqual(
      mail.replyTo!.value.map((v) => v.address),
      [replyTo],
    );
    const header = sink.header('list-unsubscribe') ?? '';
    const [, https, mailto] = /^<(https:[^>]+)>, <(mailto:[^>]+)>$/.exec(header) ?? [];
    assert.ok(https && mailto, header);
    // RFC 6068: `mailto:` to [ "?" hfields ]; each part percent-decoded on its own.
    const uri = new URL(mailto);
    assert.equal(decodeURIComponent(uri.pathname), replyTo);
    const fields = uri.search
      .slice(1)
      .split('&')
      .map((f) => f.split('=').map(decodeURIComponent));
    const [row] = await messagesOf(t, sent);
    assert.deepEqual(fields, [['subject', `unsubscribe ${links.unsubscribeToken(row.id)}`]]);
  });
});
