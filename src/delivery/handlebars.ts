/**
 * Dynamic templates (SendGrid's): a subject, an HTML part and a text part, each a Handlebars
 * template filled from a message's `dynamic_template_data`. `{{x}}` is HTML-escaped in the HTML
 * part (and only there), `{{{x}}}` is raw; `#if`, `#unless`, `#each`, `#with` and `lookup` are the
 * helpers. Templates come from the account and data from its programs, so a render is bounded:
 * no partials or decorators (no recursion), no properties of prototypes (Handlebars' default),
 * at most MAX_RENDER_STEPS block iterations and appends, and at most MAX_RENDER_CHARS characters
 * appended (each nested block's output counts again at each level, a safe over-estimate).
 */
import Handlebars from 'handlebars';
import { convert } from 'html-to-text';

/** The largest part of a template (subject, HTML, text), in characters. */
export const MAX_TEMPLATE_CHARS = 1_048_576;
/** How many characters one render may append (see the module's comment). */
export const MAX_RENDER_CHARS = 10 * 1024 * 1024;
/** How many appends and block iterations one render may make. */
export const MAX_RENDER_STEPS = 1_000_000;

/** A template that does not compile, or a render that fails or goes over its bounds: the text says why. */
export class TemplateError extends Error {}

/** The name under which each render hands its budget to the compiled code (a helper no template can call: see `compileOptions`). */
const BOUND = '__bounded_output';

type Helper = (this: unknown, ...args: unknown[]) => unknown;
interface BlockOptions {
  fn?: Helper;
  inverse?: Helper;
}

const env = Handlebars.create();
// `{{log}}` would write to the service's console: it does nothing here.
env.registerHelper('log', () => undefined);

// Every append of the compiled code goes through the render's budget. The compiler is Handlebars'
// documented extension point (`JavaScriptCompiler`); `helpers` is a parameter of every compiled
// program, and each render passes its budget there. The second argument is a stand-in for the
// options object Handlebars puts last in every helper call.
type CompilerClass = new () => { appendToBuffer(source: unknown, location?: unknown, explicit?: boolean): unknown };
const hb = env as unknown as { JavaScriptCompiler: CompilerClass };
class BoundedCompiler extends hb.JavaScriptCompiler {
  override appendToBuffer(source: unknown, location?: unknown, explicit?: boolean): unknown {
    return super.appendToBuffer([`helpers.${BOUND}(`, source, ', {})'], location, explicit);
  }
}
// Block bodies are compiled by `new this.compiler()`: they go through the budget too.
(BoundedCompiler.prototype as unknown as { compiler: CompilerClass }).compiler = BoundedCompiler;
hb.JavaScriptCompiler = BoundedCompiler;

/** Compiler options: only the built-in helpers, so `{{foo bar}}` is refused when saved, not when sent. */
const compileOptions = (escape: boolean) => ({ knownHelpersOnly: true, noEscape: !escape, strict: false });

/** The node types that would let a template call itself or run code of its own. */
const REFUSED = new Set(['PartialStatement', 'PartialBlockStatement', 'DecoratorBlock', 'Decorator']);

/** Whether an AST node (or anything below it) is a partial or a decorator (walked with a stack: templates may nest deeply). */
function refusedNode(root: unknown): boolean {
  const stack: unknown[] = [root];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    if (REFUSED.has((node as { type?: string }).type ?? '')) return true;
    for (const value of Object.values(node)) if (value && typeof value === 'object') stack.push(value);
  }
  return false;
}

/** How deep blocks may nest: Handlebars' parser takes time far worse than linear in the nesting (minutes for 10,000). */
export const MAX_BLOCK_DEPTH = 64;

/** The index of the first character at or after `i` that is not whitespace or `~` (whitespace control). */
function skipBlank(source: string, i: number): number {
  while (i < source.length && ' ~\t\r\n'.includes(source[i])) i++;
  return i;
}

/**
 * How deep the blocks of a template nest, read the way Handlebars' lexer reads mustaches (`\{{`
 * is text, `\\{{` a mustache; comments and raw blocks hold no blocks), in one pass, before the
 * parser runs. Unclosed blocks count as open to the end.
 */
export function blockDepth(source: string): number {
  let depth = 0;
  let max = 0;
  let i = source.indexOf('{{');
  while (i !== -1) {
    let next = i + 2;
    const escaped = source[i - 1] === '\\' && source[i - 2] !== '\\';
    if (!escaped) {
      if (source.startsWith('{{', next)) {
        // A raw block `{{{{x}}}}…{{{{/x}}}}`: its content is text.
        if (source[next + 2] === '/') depth = Math.max(0, depth - 1);
        else {
          depth++;
          const end = source.indexOf('{{{{/', next);
          next = end === -1 ? source.length : end;
        }
      } else if (source.startsWith('!--', next) || source[next] === '!') {
        const long = source.startsWith('!--', next);
        const end = source.indexOf(long ? '--}}' : '}}', next);
        next = end === -1 ? source.length : end + 2;
      } else {
        const j = skipBlank(source, next);
        // `{{#x}}` and `{{^x}}` open a block, `{{/x}}` closes one; `{{^}}` alone is an `else`.
        if (source[j] === '#' || (source[j] === '^' && source[skipBlank(source, j + 1)] !== '}')) depth++;
        else if (source[j] === '/') depth = Math.max(0, depth - 1);
      }
      max = Math.max(max, depth);
    }
    i = source.indexOf('{{', next);
  }
  return max;
}

/** A parser's message in one line: where (its first line) and what it expected (its last), without the source excerpt between. */
function firstAndLast(message: string): string {
  const lines = message.split('\n').filter((l) => l.trim() !== '');
  return lines.length > 1 ? `${lines[0]} ${lines[lines.length - 1]}` : (lines[0] ?? '');
}

/** Why a template part does not compile (a text naming the line), or null when it does. */
export function templateProblem(source: string): string | null {
  if (source.length > MAX_TEMPLATE_CHARS) return `The template is longer than ${MAX_TEMPLATE_CHARS} characters.`;
  if (blockDepth(source) > MAX_BLOCK_DEPTH) return `The template nests blocks more than ${MAX_BLOCK_DEPTH} deep.`;
  try {
    const ast = env.parse(source);
    if (refusedNode(ast)) return 'Partials and decorators ({{> …}}, {{#> …}}, {{#* …}}) are not supported.';
    env.precompile(source, compileOptions(true));
    return null;
  } catch (err) {
    return `The template is not valid Handlebars: ${firstAndLast(String((err as Error).message))}`;
  }
}

/** A render's budget: the helpers that count its appends and block iterations. */
function budget(): Record<string, Helper> {
  let steps = 0;
  let chars = 0;
  const step = () => {
    if (++steps > MAX_RENDER_STEPS) throw new TemplateError(`The template makes more than ${MAX_RENDER_STEPS} steps.`);
  };
  const counted = (fn: Helper | undefined) =>
    fn &&
    Object.assign(function (this: unknown, ...args: unknown[]) {
      step();
      return fn.apply(this, args);
    }, fn);
  const helpers: Record<string, Helper> = {
    [BOUND]: (value: unknown) => {
      step();
      chars += typeof value === 'string' ? value.length : String(value ?? '').length;
      if (chars > MAX_RENDER_CHARS) throw new TemplateError(`The rendered template is longer than ${MAX_RENDER_CHARS} characters.`);
      return value;
    },
  };
  for (const name of ['each', 'with', 'if', 'unless']) {
    const original = env.helpers[name] as Helper;
    helpers[name] = function (this: unknown, ...args: unknown[]) {
      const options = args[args.length - 1] as BlockOptions;
      args[args.length - 1] = { ...options, fn: counted(options.fn), inverse: counted(options.inverse) };
      return original.apply(this, args);
    };
  }
  return helpers;
}

/** Fills one template part from `data`; `escape` HTML-escapes `{{x}}` (the HTML part). Throws TemplateError. */
export function renderPart(source: string, data: unknown, escape: boolean): string {
  const problem = templateProblem(source);
  if (problem) throw new TemplateError(problem);
  try {
    const template = env.compile(source, compileOptions(escape));
    return template(data ?? {}, { helpers: budget() });
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    // A missing helper's argument, a too-deep recursion of data, a string over V8's limit…
    throw new TemplateError(`The template could not be rendered: ${String((err as Error).message).split('\n')[0]}`);
  }
}

/** A dynamic template's version, as rendering needs it. */
export interface DynamicTemplate {
  subject: string;
  html_content: string;
  plain_content: string;
  generate_plain_content: boolean;
}

/**
 * A version filled from `dynamic_template_data`: the subject and text unescaped, the HTML escaped;
 * without a text part of its own (and with `generate_plain_content`), the text is the rendered
 * HTML's text. Throws TemplateError.
 */
export function renderDynamic(version: DynamicTemplate, data: unknown): { subject: string; html: string; text: string } {
  const subject = renderPart(version.subject, data, false);
  const html = version.html_content ? renderPart(version.html_content, data, true) : '';
  const text = version.plain_content
    ? renderPart(version.plain_content, data, false)
    : version.generate_plain_content && html
      ? convert(html, { wordwrap: 78 })
      : '';
  return { subject, html, text };
}
