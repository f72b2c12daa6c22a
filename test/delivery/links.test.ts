import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CLICK_SLOT, compileDesign, OPEN_PIXEL, renderFor } from '../../src/delivery/render.js';
import { locationOf } from '../../src/delivery/click-links.js';
import { markTrackedLinks } from '../../src/delivery/links.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { TRAP_SLOT } from '../../src/delivery/trap-link.js';
import { hrefsOf } from '../modules/clicks.helpers.js';

const TRAP = 'https://t.test/trap';
/** The click slots' values, and the trap link's (rendered, hidden, after the design when it has tracked links). */
const values = (n: number) => ({
  ...Object.fromEntries(Array.from({ length: n }, (_, i) => [CLICK_SLOT + i, `https://t.test/c/${i}`])),
  [TRAP_SLOT]: TRAP,
});

describe('click links: rewriting at compile time', () => {
  it('marks the first href of each http(s) <a>, keeps every other byte, and lists distinct URLs in order', () => {
    const source =
      '<p><A HREF="HTTPS://x.test/a?b=1&amp;c=((first_name))" class=k>x</A> <a href=http://y.test>y</a>' +
      '<a href=" HTTPS://x.test/a?b=1&amp;c=((first_name)) ">again</a><a href="((unsubscribe_preferences))">u</a>' +
      '<a href="https://x.test/u?t=((unsubscribe_preferences))">own</a><a href="ftp://z">f</a><a>none</a>' +
      '<!-- <a href="https://comment.test"> --><img src="https://img.test/i.png"><a href="https://z.test" href="https://dup.test">z</a></p>';
    const { html, urls } = markTrackedLinks(source, (i) => `[${i}]`);
    assert.deepEqual(urls, ['HTTPS://x.test/a?b=1&c=((first_name))', 'http://y.test', 'https://z.test']);
    assert.equal(
      html,
      '<p><A href="[0]" class=k>x</A> <a href="[1]">y</a><a href="[0]">again</a><a href="((unsubscribe_preferences))">u</a>' +
        '<a href="https://x.test/u?t=((unsubscribe_preferences))">own</a><a href="ftp://z">f</a><a>none</a>' +
        '<!-- <a href="https://comment.test"> --><img src="https://img.test/i.png"><a href="[2]" href="https://dup.test">z</a></p>',
    );
  });

  it('compileDesign: slots in the HTML only, the text part and the pixel as before; off by default', async () => {
    const design = {
      templateHtml: '<html><body><p>Hi ((first_name))</p><a href="https://shop.test/?n=((first_name))">Shop</a></body></html>',
    };
    const c = await compileDesign({ design, subject: 's', footer: true, openPixel: true, trackClicks: true });
    assert.deepEqual(c.links, ['https://shop.test/?n=((first_name))']);
    const out = renderFor(c, {
      first_name: 'Ann',
      unsubscribe_preferences: 'https://svc.test/u/T',
      [OPEN_PIXEL]: 'https://svc.test/p.gif',
      ...values(1),
    });
    const hrefs = hrefsOf(out.html);
    assert.deepEqual(hrefs, ['https://t.test/c/0', 'https://svc.test/u/T', TRAP], 'the footer unsubscribe link stays; the trap link last');
    assert.match(out.text, /https:\/\/shop\.test\/\?n=Ann/);
    assert.ok(out.html.includes('https://svc.test/p.gif'));
    const off = await compileDesign({ design, subject: 's', footer: true, openPixel: true });
    assert.deepEqual(off.links, []);
    assert.ok(hrefsOf(renderFor(off, { first_name: 'Ann' }).html).includes('https://shop.test/?n=Ann'));
  });

  it('works on MJML designs (buttons and text links) and shipped templates', async () => {
    const doc = JSON.stringify({
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
              children: [
                {
                  tagName: 'mj-column',
                  attributes: {},
                  children: [
                    { tagName: 'mj-button', attributes: { href: 'https://buy.test/now' }, content: 'Buy' },
                    { tagName: 'mj-text', attributes: {}, content: '<a href="https://read.test/more">More</a>' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    const c = await compileDesign({ design: { templateJson: doc }, subject: 's', trackClicks: true });
    assert.deepEqual(c.links, ['https://buy.test/now', 'https://read.test/more']);
    const html = renderFor(c, values(2)).html;
    assert.ok(!html.includes('buy.test') && !html.includes('read.test'));
    const shipped = await compileDesign({ design: { templateId: 2 }, subject: 's', trackClicks: true });
    for (const url of hrefsOf(renderFor(shipped, values(shipped.links.length)).html)) assert.ok(!/^https?:\/\/(?!t\.test)/.test(url), url);
  });

  it('property: rendering with the slots filled gives the same document as rendering the design with the links replaced', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('https://a.test/', 'http://b.test/x?y=1&z=2', 'mailto:m@x.test', '#top'), { maxLength: 6 }),
        async (hrefs) => {
          const body = hrefs.map((h, i) => `<a href="${h.replace(/&/g, '&amp;')}">L${i}</a>`).join('<br>');
          const c = await compileDesign({
            design: { templateHtml: `<html><body>${body}</body></html>` },
            subject: 's',
            footer: false,
            trackClicks: true,
          });
          const got = hrefsOf(renderFor(c, values(c.links.length)).html);
          const expected = hrefs.map((h) => (h.startsWith('http') ? `https://t.test/c/${c.links.indexOf(h)}` : h));
          if (c.links.length > 0) expected.push(TRAP);
          assert.deepEqual(got, expected);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('click tokens', () => {
  const links = trackingLinks({ appSecret: 's3cret', publicUrl: 'https://svc.test' });

  it('are short, read back, and refuse any alteration or another secret', () => {
    const token = links.clickToken(123456, 42);
    assert.ok(token.length <= 30, token);
    assert.deepEqual(links.readClickToken(token), { messageId: 123456, linkId: 42 });
    assert.equal(trackingLinks({ appSecret: 'other', publicUrl: 'x' }).readClickToken(token), null);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.string({ minLength: 1, maxLength: 1 }), (at, ch) => {
        const altered = token.slice(0, at) + ch + token.slice(at + 1);
        fc.pre(altered !== token);
        assert.equal(links.readClickToken(altered), null);
      }),
      { numRuns: 500 },
    );
    for (const bad of [null, 7, '', '..', 'a.b.', `${token}.x`, 'x'.repeat(100)]) assert.equal(links.readClickToken(bad), null);
  });

  it('the Location header keeps the URL exactly, encoding only what a header cannot carry', () => {
    assert.equal(locationOf('https://x.test/a?b=1&c=%20#f'), 'https://x.test/a?b=1&c=%20#f');
    assert.equal(locationOf('https://x.test/é ü\r\n'), 'https://x.test/%C3%A9%20%C3%BC%0D%0A');
  });
});
