import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  blockDepth,
  MAX_BLOCK_DEPTH,
  MAX_RENDER_CHARS,
  MAX_TEMPLATE_CHARS,
  renderDynamic,
  renderPart,
  TemplateError,
  templateProblem,
} from '../../src/delivery/handlebars.js';

describe('dynamic templates (Handlebars)', () => {
  it('escapes {{x}} in the HTML part only, and leaves {{{x}}} raw', () => {
    const out = renderDynamic(
      { subject: 'Hi {{name}}', html_content: '<p>{{name}} {{{raw}}}</p>', plain_content: 'Dear {{name}}', generate_plain_content: true },
      { name: 'Tom & <Jerry>', raw: '<b>bold</b>' },
    );
    assert.equal(out.subject, 'Hi Tom & <Jerry>');
    assert.equal(out.html, '<p>Tom &amp; &lt;Jerry&gt; <b>bold</b></p>');
    assert.equal(out.text, 'Dear Tom & <Jerry>');
  });

  it('fills #if, #unless, #each and #with from the data, and leaves unknown names empty', () => {
    const html =
      '{{#if vip}}VIP{{else}}regular{{/if}} {{#unless vip}}no{{/unless}}{{#each items}}[{{@index}}:{{this.name}}]{{/each}} {{#with user}}{{email}}{{/with}} [{{missing.deep}}]';
    assert.equal(
      renderPart(html, { vip: true, items: [{ name: 'a' }, { name: 'b' }], user: { email: 'u@example.com' } }, true),
      'VIP [0:a][1:b] u@example.com []',
    );
    assert.equal(renderPart(html, { vip: false }, true), 'regular no  []');
  });

  it('makes the text part from the rendered HTML when it has none of its own', () => {
    const out = renderDynamic(
      { subject: 's', html_content: '<h1>Hello {{n}}</h1><p>Line</p>', plain_content: '', generate_plain_content: true },
      { n: 'Ann' },
    );
    assert.match(out.text, /HELLO ANN/);
    assert.match(out.text, /Line/);
    const none = renderDynamic({ subject: 's', html_content: '<p>x</p>', plain_content: '', generate_plain_content: false }, {});
    assert.equal(none.text, '');
  });

  it('refuses templates that do not compile, naming the problem', () => {
    assert.equal(templateProblem('Hello {{name}}'), null);
    assert.match(templateProblem('{{#if x}}unclosed')!, /not valid Handlebars/);
    assert.match(templateProblem('{{#each items}}{{/if}}')!, /not valid Handlebars/);
    // Only the built-in helpers: a call of any other is refused when saved, not when sent.
    assert.match(templateProblem('{{formatDate when "YYYY"}}')!, /not valid Handlebars/);
    assert.match(templateProblem('{{> header}}')!, /Partials/);
    assert.match(templateProblem('{{#*inline "p"}}x{{/inline}}')!, /Partials and decorators/);
    assert.match(templateProblem('x'.repeat(MAX_TEMPLATE_CHARS + 1))!, /longer than/);
  });

  it('never reads properties of prototypes', () => {
    const out = renderPart(
      '[{{constructor}}][{{__proto__}}][{{name.constructor.name}}][{{#with __proto__}}{{toString}}{{/with}}]',
      { name: 'x' },
      true,
    );
    assert.equal(out, '[][][][]');
  });

  it('stops a render whose output grows past the bound, or whose loops multiply', () => {
    const big = 'x'.repeat(1024 * 1024);
    assert.throws(
      () => renderPart('{{{x}}}'.repeat(11), { x: big }, false),
      (e: unknown) => e instanceof TemplateError && /longer than/.test(e.message),
    );
    assert.ok(MAX_RENDER_CHARS >= 10 * 1024 * 1024);
    // 1,000³ iterations of an empty body: refused by the step count, quickly.
    const a = Array.from({ length: 1000 }, (_, i) => i);
    const started = Date.now();
    assert.throws(
      () => renderPart('{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{/each}}{{/each}}{{/each}}', { a }, true),
      (e: unknown) => e instanceof TemplateError && /steps/.test(e.message),
    );
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });

  it('turns a failing render into a TemplateError, never another exception', () => {
    assert.throws(() => renderPart('{{lookup}}', {}, true), TemplateError);
  });

  it('refuses blocks nested deeper than the bound before parsing, however they hide', () => {
    assert.equal(blockDepth('{{#if a}}{{#each b}}{{^c}}x{{else}}y{{/c}}{{/each}}{{/if}}{{^}}'), 3);
    assert.equal(blockDepth('{{~#if a~}} {{~/if~}}'), 1);
    const ok = '{{#if a}}'.repeat(MAX_BLOCK_DEPTH) + '{{/if}}'.repeat(MAX_BLOCK_DEPTH);
    assert.equal(templateProblem(ok), null);
    for (const source of [
      '{{#if a}}'.repeat(10_000),
      '{{#if a}}'.repeat(MAX_BLOCK_DEPTH + 1) + '{{/if}}'.repeat(MAX_BLOCK_DEPTH + 1),
      // Closings that Handlebars reads as text do not close anything.
      '{{#if a}}{{!-- {{/if}} --}}'.repeat(5_000),
      '{{#if a}}{{! {{/if}} }}'.repeat(5_000),
      '{{#if a}}\\{{/if}}'.repeat(5_000),
    ]) {
      const started = Date.now();
      assert.match(templateProblem(source)!, /nests blocks more than/, source.slice(0, 30));
      assert.ok(Date.now() - started < 500, `${source.slice(0, 30)}: ${Date.now() - started} ms`);
    }
  });

  it('parses 100 KB of adversarial template in linear time', () => {
    // Sizes compared in one run (CPU time, so other work on the machine does not count): doubling a
    // linear parse's input about doubles its time, a quadratic one's quadruples it.
    const cpuMs = (source: string) => {
      const started = process.cpuUsage();
      templateProblem(source);
      const { user, system } = process.cpuUsage(started);
      return (user + system) / 1000;
    };
    for (const [unit, times] of [
      ['{{', 50_000],
      ['{{#if a}}', 10_000],
      ['{{!--', 20_000],
      ['\\{{', 30_000],
    ] as const) {
      const half = Math.min(cpuMs(unit.repeat(times / 2)), cpuMs(unit.repeat(times / 2)));
      const full = Math.min(cpuMs(unit.repeat(times)), cpuMs(unit.repeat(times)));
      assert.ok(full < 3 * half + 50, `${unit}: ${half.toFixed(0)} ms for half, ${full.toFixed(0)} ms for all`);
    }
  });
});
