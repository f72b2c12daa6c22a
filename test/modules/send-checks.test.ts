/**
 * `GET /single-send/check`: the links of a send's design with their kinds, and the warnings worth
 * a look before sending (dead links, unknown placeholders, an unverified sender, no recipient, a
 * design that cannot be used).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSend, group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const RNF = { status: 'failed', errors: 'Record not found' };
const DESIGN = `<html><body>
<p>Hello ((first_name)), your ((tier)) and ((frist_name))</p>
<a href="#">Read the story</a>
<a href="">Nothing</a>
<a href="javascript:alert(1)">Script</a>
<a href=" www.example.com/news ">No scheme</a>
<a href="https://example.com/ok?e=((email))&amp;x=1">Fine</a>
<a href="mailto:hi@example.com">Write to us</a>
<a href="tel:+15550100">Call</a>
<a href="https://example.com/logo"><img src="https://example.com/logo.png" alt="Our logo"></a>
<a name="top">an anchor target, not a link</a>
<a href="((unsubscribe_preferences))">Unsubscribe</a>
</body></html>`;

describe('the check of a single send before sending', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  const later = { schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '10:30' };

  const check = async (utr: string) => {
    const r = await t.a.get('/single-send/check', { utr });
    assert.equal(r.status, 200, r.text);
    return r.body.message as {
      links: Array<{ url: string; text: string; kind: string; variant?: number }>;
      recipients: number;
      warnings: Array<{ type: string; message: string; url?: string; text?: string; variant?: number }>;
    };
  };

  before(async () => {
    t = await setupSends();
    const { type } = await typeWith(t.a, [['ann@example.com', 'Ann']]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    // The senders' domain is a sending domain (still pending): no warning about it in the checks below.
    assert.equal((await t.a.post('/sending-domains/create', { domain: 'example.com' })).status, 200);
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'tier', field_type: 'text' })).status, 200);
  });
  after(() => t.close());

  test('lists every link with its kind and warns about #, empty and non-web links and an unknown placeholder', async () => {
    const utr = await createSend(t.a, sendForm(base, { template_html: DESIGN, ...later }));
    const c = await check(utr);
    assert.deepEqual(c.links, [
      { url: '#', text: 'Read the story', kind: 'anchor' },
      { url: '', text: 'Nothing', kind: 'empty' },
      { url: 'javascript:alert(1)', text: 'Script', kind: 'other' },
      { url: 'www.example.com/news', text: 'No scheme', kind: 'other' },
      { url: 'https://example.com/ok?e=((email))&x=1', text: 'Fine', kind: 'web' },
      { url: 'mailto:hi@example.com', text: 'Write to us', kind: 'mailto' },
      { url: 'tel:+15550100', text: 'Call', kind: 'tel' },
      { url: 'https://example.com/logo', text: 'Our logo', kind: 'web' },
      { url: '((unsubscribe_preferences))', text: 'Unsubscribe', kind: 'placeholder' },
    ]);
    assert.equal(c.recipients, 1);
    assert.deepEqual(c.warnings, [
      {
        type: 'link_anchor',
        message: '“Read the story” links to “#”, which goes nowhere in a mail.',
        url: '#',
        text: 'Read the story',
      },
      { type: 'link_empty', message: '“Nothing” has an empty link.', url: '', text: 'Nothing' },
      {
        type: 'link_not_web',
        message: '“Script” links to “javascript:alert(1)”, which is not a web address (https://…).',
        url: 'javascript:alert(1)',
        text: 'Script',
      },
      {
        type: 'link_not_web',
        message: '“No scheme” links to “www.example.com/news”, which is not a web address (https://…).',
        url: 'www.example.com/news',
        text: 'No scheme',
      },
      {
        type: 'unknown_placeholder',
        message: '((frist_name)) is neither a contact field nor a custom field: it will be empty in every mail.',
      },
    ]);
  });

  test('a shipped design’s # buttons are warned about; the footer added to a design is listed', async () => {
    const utr = await createSend(t.a, sendForm(base, { template_id: 2, template_html: undefined, ...later }));
    const c = await check(utr);
    assert.ok(
      c.warnings.some((w) => w.type === 'link_anchor'),
      JSON.stringify(c.warnings),
    );
    assert.ok(c.links.some((l) => l.url === '((unsubscribe_preferences))'));
    // A design with nothing wrong has no warning.
    const clean = await createSend(
      t.a,
      sendForm(base, { template_html: '<html><body><a href="https://example.com/">Visit</a></body></html>', ...later }),
    );
    const ok = await check(clean);
    assert.deepEqual(ok.warnings, []);
    assert.deepEqual(
      ok.links.map((l) => [l.url, l.kind]),
      [
        ['https://example.com/', 'web'],
        ['((unsubscribe_preferences))', 'placeholder'],
      ],
    );
  });

  test('warns about an unverified sender and a send nobody would get', async () => {
    const sender = await verifiedSender(t, t.a, { nickname: 'Soon unverified' });
    const empty = (await typeWith(t.a, [])).type;
    const utr = await createSend(t.a, sendForm({ ...base, sender, type: empty }, later));
    await t.database.db.updateTable('senders').set({ is_verified: 0 }).where('id', '=', sender).execute();
    const c = await check(utr);
    assert.equal(c.recipients, 0);
    assert.deepEqual(
      c.warnings.map((w) => [w.type, w.message]),
      [
        ['sender_not_verified', 'The sender is not verified: the send is refused until its address is confirmed.'],
        ['no_recipients', 'Nobody would get this send now: its recipients are empty, excluded, unsubscribed or suppressed.'],
      ],
    );
  });

  test('a stored design that cannot be used is a warning, not a failure', async () => {
    const utr = await createSend(t.a, sendForm(base, later));
    await t.database.db.updateTable('single_sends').set({ template_json: '{"tagName":"nope"' }).where('utr', '=', utr).execute();
    const c = await check(utr);
    assert.deepEqual(c.links, []);
    assert.deepEqual(
      c.warnings.map((w) => w.type),
      ['design_invalid'],
    );
    assert.match(c.warnings[0].message, /^The design cannot be used: /);
  });

  test("an A/B test: every variant's own design and subject, each warning naming its variant", async () => {
    const own =
      '<html><body><p>Hi ((first_name)) in ((colour))</p><a href="">Empty</a><a href="https://example.com/b">Fine</a></body></html>';
    const utr = await createSend(
      t.a,
      sendForm(base, {
        ...later,
        template_html: '<html><body><a href="#">Read the story</a><a href="https://example.com/a">Shop</a></body></html>',
        subject: 'News for ((frist_name))',
        ab_test: 1,
        ab_test_percent: 20,
        ab_winner_metric: 'opens',
        ab_wait_minutes: 60,
        variants: [
          // The send's design (its links listed once, under variant 0); a subject with an unknown and a known field.
          { subject: 'Hello ((nickname)), your ((tier))' },
          { subject: 'Plain', template_html: own },
          // The same unknown name as variant 0's subject: each variant is told about its own.
          { subject: 'Again ((frist_name))' },
        ],
      }),
    );
    const c = await check(utr);
    assert.deepEqual(
      c.links.map((l) => [l.variant, l.url, l.kind]),
      [
        [0, '#', 'anchor'],
        [0, 'https://example.com/a', 'web'],
        [0, '((unsubscribe_preferences))', 'placeholder'],
        [2, '', 'empty'],
        [2, 'https://example.com/b', 'web'],
        [2, '((unsubscribe_preferences))', 'placeholder'],
      ],
    );
    assert.deepEqual(c.warnings, [
      {
        type: 'link_anchor',
        message: 'Variant 0: “Read the story” links to “#”, which goes nowhere in a mail.',
        url: '#',
        text: 'Read the story',
        variant: 0,
      },
      {
        type: 'unknown_placeholder',
        message: 'Variant 0: ((frist_name)) is neither a contact field nor a custom field: it will be empty in every mail.',
        variant: 0,
      },
      {
        type: 'unknown_placeholder',
        message: 'Variant 1: ((nickname)) is neither a contact field nor a custom field: it will be empty in every mail.',
        variant: 1,
      },
      { type: 'link_empty', message: 'Variant 2: “Empty” has an empty link.', url: '', text: 'Empty', variant: 2 },
      {
        type: 'unknown_placeholder',
        message: 'Variant 2: ((colour)) is neither a contact field nor a custom field: it will be empty in every mail.',
        variant: 2,
      },
      {
        type: 'unknown_placeholder',
        message: 'Variant 3: ((frist_name)) is neither a contact field nor a custom field: it will be empty in every mail.',
        variant: 3,
      },
    ]);

    // A variant's stored design that no longer compiles is its own warning; the others are still checked.
    await t.database.db
      .updateTable('single_send_variants')
      .set({ template_html: null, template_json: '{"tagName":"nope"' })
      .where('variant', '=', 2)
      .where(
        'single_send_id',
        '=',
        (await t.database.db.selectFrom('single_sends').select('id').where('utr', '=', utr).executeTakeFirstOrThrow()).id,
      )
      .execute();
    await t.database.db.updateTable('single_sends').set({ updated_at: '2031-01-01T00:00:00.000000Z' }).where('utr', '=', utr).execute();
    const broken = await check(utr);
    assert.deepEqual(
      broken.warnings.map((w) => [w.variant, w.type]),
      [
        [0, 'link_anchor'],
        [0, 'unknown_placeholder'],
        [1, 'unknown_placeholder'],
        [2, 'design_invalid'],
        [3, 'unknown_placeholder'],
      ],
    );
    assert.match(broken.warnings[3].message, /^Variant 2: The design cannot be used: /);
    assert.equal(broken.links.filter((l) => l.variant === 2).length, 0);

    // The same send without its test: no variant is named.
    const plain = await createSend(t.a, sendForm(base, { ...later, template_html: '<html><body><a href="#">Read</a></body></html>' }));
    assert.ok((await check(plain)).warnings.every((w) => !('variant' in w)));
    assert.ok((await check(plain)).links.every((l) => !('variant' in l)));
  });

  test('another account’s send, an unknown utr and a missing utr', async () => {
    const utr = await createSend(t.a, sendForm(base, later));
    const other = await t.b.get('/single-send/check', { utr });
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, RNF);
    assert.deepEqual((await t.a.get('/single-send/check', { utr: 'no-such-utr' })).body, RNF);
    // As every single-send endpoint: a missing utr is not found either.
    const none = await t.a.get('/single-send/check');
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, RNF);
  });
});
