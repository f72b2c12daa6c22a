import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isoMicros } from '../../src/util/time.js';
import { setup, type Response, type TestContext } from '../helpers.js';
import { seedAutomationEmail, type SeedEmailInput } from './seed.js';

const mjml = (content: string) =>
  JSON.stringify({
    tagName: 'mjml',
    attributes: {},
    children: [
      {
        tagName: 'mj-body',
        attributes: {},
        children: [
          {
            tagName: 'mj-section',
            attributes: {},
            children: [{ tagName: 'mj-column', attributes: {}, children: [{ tagName: 'mj-text', attributes: {}, content }] }],
          },
        ],
      },
    ],
  });
const html = (body: string) => `<!doctype html><html><head><title></title></head><body>${body}</body></html>`;

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** The email's HTML as the frame gets it: the page's `srcdoc` attribute, unescaped once. */
function frameOf(page: string): string {
  const m = /<iframe title="The email" sandbox srcdoc="([^"]*)"><\/iframe>/.exec(page);
  assert.ok(m, 'one sandboxed frame with a srcdoc');
  return m[1].replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]);
}

/** The page with the frame's srcdoc taken out: what the top document itself holds. */
const outsideFrame = (page: string) => page.replace(/srcdoc="[^"]*"/, 'srcdoc=""');

describe('the design preview page: GET /designs/<utr>', () => {
  let t: TestContext;
  let userId: number;

  before(async () => {
    t = await setup();
    userId = t.a.keys!.user_id;
    const now = isoMicros(new Date());
    const field = (user_id: number, field_name: string, field_type: string) => ({
      user_id,
      field_name,
      field_type,
      is_reserved: 0,
      created_at: now,
      updated_at: now,
    });
    await t.database.db
      .insertInto('fields')
      .values([field(userId, 'Favourite_Color', 'text'), field(userId, 'shoe_size', 'number'), field(t.b.keys!.user_id, 'team', 'text')])
      .execute();
  });
  after(() => t.close());

  const email = (input: SeedEmailInput) => seedAutomationEmail(t.database.db, userId, input);
  const preview = (utr: string) => t.anon.get(`/designs/${utr}`);

  function assertPreviewHeaders(r: Response) {
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    const csp = String(r.headers['content-security-policy']);
    assert.match(csp, /^default-src 'none';/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'none'/);
    assert.doesNotMatch(csp, /script-src|unsafe-eval|'self'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['set-cookie'], undefined);
  }

  function assertNotFound(r: Response) {
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.match(r.text, /<h1>Link not valid<\/h1>/);
    assert.match(r.text, /This design link is not valid/);
  }

  it('shows an MJML design for the sample contact: subject, sender, body and footer, with strict headers', async () => {
    const utr = await email({ subject: 'Welcome, ((first_name))!', templateJson: mjml('Hi ((first_name)) ((last_name)), ((email))') });
    const r = await preview(utr);
    assertPreviewHeaders(r);
    assert.match(r.text, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(r.text, /<dt>Subject<\/dt><dd>Welcome, Alex!<\/dd>/);
    assert.match(r.text, /<dt>From<\/dt><dd>Ada &lt;ada@example\.com&gt;<\/dd>/);
    assert.match(r.text, /<dt>To<\/dt><dd>Alex Sample &lt;alex@example\.com&gt;<\/dd>/);
    const frame = frameOf(r.text);
    assert.match(frame, /Hi Alex Sample, alex@example\.com/);
    assert.match(frame, /<title>Welcome, Alex!<\/title>/);
    // The footer the mail will carry: the sender's name and address, and an unsubscribe link that goes nowhere.
    assert.match(frame, /Ada<br>1 Main St, Springfield/);
    assert.match(frame, /<a href="#"[^>]*>Unsubscribe or manage your email preferences<\/a>/);
    assert.doesNotMatch(r.text, /\/t\/open\/|\/u\//, 'no open pixel, no real unsubscribe link');
  });

  it('shows an HTML design, keeping its own footer parts', async () => {
    const utr = await email({
      subject: 'News',
      templateHtml: html(
        '<h2>Spring news</h2><p>From ((sender_name)), ((sender_address)). <a href="((unsubscribe_preferences))">Leave</a></p>',
      ),
      senderName: 'Acme & Co',
    });
    const r = await preview(utr);
    assertPreviewHeaders(r);
    const frame = frameOf(r.text);
    assert.match(frame, /<h2>Spring news<\/h2><p>From Acme &amp; Co, 1 Main St, Springfield\. <a href="#">Leave<\/a><\/p>/);
    assert.doesNotMatch(frame, /Unsubscribe or manage/, 'no footer added: the design has both parts');
    assert.match(r.text, /<dd>Acme &amp; Co &lt;ada@example\.com&gt;<\/dd>/);
  });

  it('shows a shipped template when the email has no design of its own', async () => {
    const r = await preview(await email({ templateId: 1 }));
    assertPreviewHeaders(r);
    assert.match(frameOf(r.text), /<\/html>/i);
  });

  it('fills every placeholder with a sample, custom fields of the account by type, and escapes the subject', async () => {
    const utr = await email({
      subject: '<b>((first_name))</b> & ((company_name)): "((favourite_color))"',
      templateHtml: html(
        '<p>((full_name)) | ((city)), ((country)) | ((Favourite_Color)) | ((shoe_size)) | [((team))] | [((nothing_like_this))]</p>',
      ),
    });
    const r = await preview(utr);
    assertPreviewHeaders(r);
    assert.match(r.text, /<dd>&lt;b&gt;Alex&lt;\/b&gt; &amp; Example Inc\.: &quot;Sample Favourite Color&quot;<\/dd>/);
    // Another account's field and an unknown name render empty, as they will in the mail.
    assert.match(frameOf(r.text), /<p>Alex Sample \| San Francisco, United States \| Sample Favourite Color \| 42 \| \[\] \| \[\]<\/p>/);
  });

  it('shows a design holding scripts only escaped inside the sandboxed frame', async () => {
    const utr = await email({
      subject: '<script>alert("subject")</script>',
      senderName: '<script>alert("name")</script>',
      templateHtml: html('<p>Hello</p><script>document.title = "pwned"</script><img src=x onerror="alert(1)">'),
    });
    const r = await preview(utr);
    assertPreviewHeaders(r);
    assert.ok(!/<script|<img/i.test(r.text), 'no element of the design in the page itself');
    assert.doesNotMatch(outsideFrame(r.text), /onerror|pwned/);
    assert.match(r.text, /<dd>&lt;script&gt;alert\(&quot;subject&quot;\)&lt;\/script&gt;<\/dd>/);
    assert.match(r.text, /<iframe title="The email" sandbox srcdoc="/, 'sandbox with no flags');
    const frame = frameOf(r.text);
    assert.match(frame, /<script>document\.title = "pwned"<\/script>/);
    assert.match(frame, /&lt;script&gt;alert\(&quot;name&quot;\)&lt;\/script&gt;<br>1 Main St/, 'the sender name escaped in the footer');
  });

  it('answers a page saying so, not an error, for a stored design that cannot be rendered', async () => {
    for (const input of [{ templateJson: '{"tagName":"mjml"}' }, { templateJson: 'not json' }, { templateId: 987654 }]) {
      const r = await preview(await email(input));
      assert.equal(r.status, 200, JSON.stringify(input));
      assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
      assert.match(r.text, /<h1>Design cannot be shown<\/h1>/);
      assert.doesNotMatch(r.text, /<iframe/);
    }
  });

  it('answers the not-valid page for an unknown or malformed utr and for a deleted automation', async () => {
    assertNotFound(await preview(randomUUID()));
    assertNotFound(await preview('not-a-utr'));
    assertNotFound(await preview(`${randomUUID()}x`));
    assertNotFound(await preview("1' or '1'='1"));
    assertNotFound(await preview(await email({ deleted: true })));
  });

  it('answers HEAD with the headers and no body', async () => {
    const utr = await email({ templateHtml: html('<p>Hi</p>') });
    const r = await t.app.inject({ method: 'HEAD', url: `/designs/${utr}` });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.body, '');
    assert.equal((await t.app.inject({ method: 'HEAD', url: `/designs/${randomUUID()}` })).statusCode, 404);
  });
});
