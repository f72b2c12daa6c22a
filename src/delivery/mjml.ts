/**
 * MJML in its JSON form ({tagName, attributes, children, content}): checking a caller's document
 * and compiling it to HTML. `mjml` takes ~0.7 s to import, so it is loaded on first use only.
 */

export interface MjmlNode {
  tagName: string;
  attributes?: Record<string, string | number | boolean>;
  children?: MjmlNode[];
  content?: string;
}

type Mjml2Html = (
  input: MjmlNode,
  options: Record<string, unknown>,
) =>
  | { html: string; errors: Array<{ message: string; tagName: string }> }
  | Promise<{ html: string; errors: Array<{ message: string; tagName: string }> }>;

let mjmlModule: Promise<Mjml2Html> | null = null;
function loadMjml(): Promise<Mjml2Html> {
  mjmlModule ??= import('mjml').then((m) => ((m as { default?: unknown }).default ?? m) as Mjml2Html);
  return mjmlModule;
}

/** Limits that keep a hostile document from costing more than a large real one. */
const MAX_DEPTH = 64;
const MAX_NODES = 20_000;

/** A design the caller sent that cannot be used; its message is meant for a 422 field error. */
export class DesignError extends Error {}

/**
 * Checks the shape of an MJML JSON document without compiling it: the message for the first
 * problem, or null. Iterative, so a deeply nested document cannot overflow the stack.
 */
export function checkMjmlShape(doc: unknown, label: string): string | null {
  const bad = (why: string) => `The ${label} must be an MJML document in JSON form: ${why}.`;
  if (!isObject(doc) || doc.tagName !== 'mjml') return bad('the root element must be "mjml"');
  const children = doc.children;
  if (!Array.isArray(children) || !children.some((c) => isObject(c) && c.tagName === 'mj-body')) {
    return bad('"mjml" must contain an "mj-body" element');
  }
  const stack: Array<[unknown, number]> = [[doc, 0]];
  let count = 0;
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (++count > MAX_NODES) return bad(`more than ${MAX_NODES} elements`);
    if (depth > MAX_DEPTH) return bad(`elements nested more than ${MAX_DEPTH} deep`);
    if (!isObject(node)) return bad('every element must be an object');
    if (typeof node.tagName !== 'string' || !/^[a-z][a-z0-9-]*$/i.test(node.tagName)) return bad('every element needs a "tagName"');
    const { attributes, content } = node;
    if (attributes !== undefined) {
      if (!isObject(attributes)) return bad(`"attributes" of ${node.tagName} must be an object`);
      for (const v of Object.values(attributes)) {
        if (!['string', 'number', 'boolean'].includes(typeof v)) return bad(`attribute values of ${node.tagName} must be text`);
      }
    }
    if (content !== undefined && typeof content !== 'string') return bad(`"content" of ${node.tagName} must be text`);
    if (node.children !== undefined) {
      if (!Array.isArray(node.children)) return bad(`"children" of ${node.tagName} must be an array`);
      for (const c of node.children) stack.push([c, depth + 1]);
    }
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses and checks a design's JSON text; throws DesignError with a message for the caller. */
export function parseDesign(json: string, label = 'template json'): MjmlNode {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new DesignError(`The ${label} must be valid JSON.`);
  }
  const problem = checkMjmlShape(doc, label);
  if (problem) throw new DesignError(problem);
  return doc as MjmlNode;
}

/**
 * Compiles an MJML JSON document to HTML. `mj-include` is ignored (it would read server files);
 * validation is "soft" because editors emit attributes MJML does not know, but an unknown element
 * is refused: MJML would silently drop it and the mail would lose content.
 */
export async function compileMjml(doc: MjmlNode, label = 'template json'): Promise<string> {
  const mjml2html = await loadMjml();
  let result: Awaited<ReturnType<Mjml2Html>>;
  try {
    // A copy: MJML may annotate the tree it is given, and shipped documents are shared.
    result = await mjml2html(structuredClone(doc), { validationLevel: 'soft', ignoreIncludes: true, keepComments: false });
  } catch (err) {
    throw new DesignError(`The ${label} could not be compiled: ${(err as Error).message.split('\n')[0]}`);
  }
  const unknown = result.errors.find((e) => /doesn't exist or is not registered/.test(e.message));
  if (unknown) throw new DesignError(`The ${label} uses an unknown element: ${unknown.tagName}.`);
  return result.html;
}

/**
 * Checks a caller's `template_json` (single sends, automation emails): null when it parses and
 * compiles, else the message to report as a 422 field error.
 */
export async function validateDesign(json: string, label = 'template json'): Promise<string | null> {
  try {
    await compileMjml(parseDesign(json, label), label);
    return null;
  } catch (err) {
    if (err instanceof DesignError) return err.message;
    throw err;
  }
}
