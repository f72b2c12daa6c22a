import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { jsonToMjml, mjmlToJson, MjmlSyntaxError, type MjmlJson } from '../../web/src/pages/designs/mjml-json.js';
import { compileMjml } from '../../src/delivery/mjml.js';

const TEMPLATES = join(import.meta.dirname, '..', '..', 'assets', 'templates');

/** Attributes as the reader gives them: always an object, values as text. */
function normalised(node: MjmlJson): MjmlJson {
  const out: MjmlJson = {
    tagName: node.tagName,
    attributes: Object.fromEntries(Object.entries(node.attributes ?? {}).map(([k, v]) => [k, String(v)])),
  };
  if (node.content !== undefined && node.content.trim() !== '') out.content = node.content.trim();
  if (node.children?.length) out.children = node.children.map(normalised);
  return out;
}

describe('the console’s MJML text ↔ JSON conversion', () => {
  for (const file of readdirSync(TEMPLATES).filter((f) => f.endsWith('.json'))) {
    it(`round-trips the shipped ${file} and compiles to the same HTML`, async () => {
      const doc = JSON.parse(readFileSync(join(TEMPLATES, file), 'utf8')) as MjmlJson;
      const back = mjmlToJson(jsonToMjml(doc));
      assert.deepEqual(back, normalised(doc));
      assert.equal(await compileMjml(back as never), await compileMjml(doc as never));
    });
  }

  it('reads attributes in every quoting, entities, comments and self-closed elements', () => {
    const text = `<?xml version="1.0"?>
      <!-- made by hand -->
      <mjml>
        <mj-head><mj-attributes><mj-all font-family='Arial, "Helvetica"' /><mj-text color=red></mj-text></mj-attributes></mj-head>
        <mj-body width="600px">
          <mj-section><mj-column>
            <mj-text align="center" title="a &amp; b &quot;c&quot;">  Hello <b>((first_name))</b> &amp; <br> welcome  </mj-text>
            <mj-image src="https://example.com/a.png?x=1&amp;y=2"/>
            <mj-raw><div><p>raw</p></div></mj-raw>
          </mj-column></mj-section>
        </mj-body>
      </mjml>`;
    assert.deepEqual(mjmlToJson(text), {
      tagName: 'mjml',
      attributes: {},
      children: [
        {
          tagName: 'mj-head',
          attributes: {},
          children: [
            {
              tagName: 'mj-attributes',
              attributes: {},
              children: [
                { tagName: 'mj-all', attributes: { 'font-family': 'Arial, "Helvetica"' } },
                { tagName: 'mj-text', attributes: { color: 'red' } },
              ],
            },
          ],
        },
        {
          tagName: 'mj-body',
          attributes: { width: '600px' },
          children: [
            {
              tagName: 'mj-section',
              attributes: {},
              children: [
                {
                  tagName: 'mj-column',
                  attributes: {},
                  children: [
                    {
                      tagName: 'mj-text',
                      attributes: { align: 'center', title: 'a & b "c"' },
                      content: 'Hello <b>((first_name))</b> &amp; <br> welcome',
                    },
                    { tagName: 'mj-image', attributes: { src: 'https://example.com/a.png?x=1&y=2' } },
                    { tagName: 'mj-raw', attributes: {}, content: '<div><p>raw</p></div>' },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it('writes attribute values escaped and content as it is', () => {
    assert.equal(
      jsonToMjml({ tagName: 'mj-text', attributes: { title: 'a & "b" <c>', padding: 0 }, content: '<p>x &amp; y</p>' }),
      '<mj-text title="a &amp; &quot;b&quot; &lt;c>" padding="0"><p>x &amp; y</p></mj-text>',
    );
    assert.deepEqual(mjmlToJson(jsonToMjml({ tagName: 'mjml', attributes: { lang: 'a"b' } })), {
      tagName: 'mjml',
      attributes: { lang: 'a"b' },
    });
  });

  it('refuses what is not one closed mjml document', () => {
    for (const bad of [
      '',
      'hello',
      '<mjml><mj-body>',
      '<mjml><mj-body></mj-section></mjml>',
      '<mj-body></mj-body>',
      '<mjml></mjml>x',
      '<mjml><mj-text>x</mjml>',
    ]) {
      assert.throws(() => mjmlToJson(bad), MjmlSyntaxError, JSON.stringify(bad));
    }
  });
});
