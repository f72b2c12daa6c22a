import { AppError } from './errors.js';

/**
 * The most fields one form body or query string may hold, and so the most entries of one of its
 * arrays: bulk deletes take up to 10,000 ids (`strIds[0]` … `strIds[9999]`).
 */
export const MAX_FIELDS = 10_000;

export const TOO_MANY_FIELDS = `The request has too many fields: at most ${MAX_FIELDS} are read.`;

/** Bracket groups read in a name; what follows stays one name, as text (`a[b][c][d][e][f][g]` → …, `[g]`). */
const DEPTH = 5;

/** A value as sent: one, or several under a repeated name. */
type Leaf = string | string[];

/** One step of a bracketed name: a member name (`custom_field`, `[age]`), an index (`[0]`) or `[]` (the next index). */
interface Step {
  kind: 'name' | 'index' | 'push';
  name: string;
}

/** A container being built: its members, and whether each came by index or `[]` (then it becomes an array). */
class Branch {
  readonly members: Record<string, Leaf | Branch> = Object.create(null);
  list = true;
  next = 0;
}

/**
 * The non-empty `&`-separated pieces of `text`. More than MAX_FIELDS is a 413, noticed while
 * scanning, so a huge body costs at most one pass and never a huge array.
 */
export function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start <= text.length;) {
    const amp = text.indexOf('&', start);
    const end = amp === -1 ? text.length : amp;
    if (end > start) {
      if (pieces.length === MAX_FIELDS) throw new AppError(413, TOO_MANY_FIELDS);
      pieces.push(text.slice(start, end));
    }
    start = end + 1;
  }
  return pieces;
}

/** `+` is a space, then `%XX` decoded; a component with a malformed escape is kept as sent. */
function decode(component: string): string {
  const spaced = component.includes('+') ? component.replace(/\+/g, ' ') : component;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** Adds a value under `name`; a repeated name collects its values in one list. */
function addValue(fields: Map<string, Leaf>, name: string, value: Leaf): void {
  const prev = fields.get(name);
  if (prev === undefined) fields.set(name, typeof value === 'string' ? value : [...value]);
  else if (Array.isArray(prev)) appendTo(prev, value);
  else fields.set(name, [prev].concat(value));
}

/** Appends in place: building a list by copying it for each value would cost its square. */
function appendTo(list: string[], value: Leaf): void {
  if (typeof value === 'string') list.push(value);
  else for (const v of value) list.push(v);
}

/** The position of the `]` closing the `[` at `open` (nested pairs balanced), or -1. */
function closingBracket(name: string, open: number): number {
  let level = 0;
  for (let i = open; i < name.length; i++) {
    if (name[i] === '[') level++;
    else if (name[i] === ']' && --level === 0) return i;
  }
  return -1;
}

/** The step a bracket group's content makes. */
function stepOf(content: string): Step {
  if (content === '') return { kind: 'push', name: '' };
  // An index from 0 to MAX_FIELDS - 1 makes an array; a larger number is a member name.
  if (/^(0|[1-9]\d*)$/.test(content) && Number(content) < MAX_FIELDS) return { kind: 'index', name: content };
  return { kind: 'name', name: content };
}

/**
 * The steps of a name: the part before the first `[`, then up to DEPTH bracket groups; text
 * between groups is ignored, and what remains after them (or an unclosed `[`) is one last name.
 */
function stepsOf(name: string): Step[] {
  let open = name.indexOf('[');
  const steps: Step[] = [];
  const head = open === -1 ? name : name.slice(0, open);
  if (head !== '') steps.push({ kind: 'name', name: head });
  for (let groups = 0; open !== -1 && groups < DEPTH; groups++) {
    const close = closingBracket(name, open);
    if (close === -1) break;
    steps.push(stepOf(name.slice(open + 1, close)));
    open = name.indexOf('[', close + 1);
  }
  if (open !== -1) steps.push({ kind: 'name', name: name.slice(open) });
  return steps;
}

/** The member name a step fills in `branch`, noting whether the branch is still a list. */
function memberName(branch: Branch, step: Step): string {
  if (step.kind === 'name') {
    branch.list = false;
    return step.name;
  }
  const index = step.kind === 'push' ? branch.next : Number(step.name);
  branch.next = Math.max(branch.next, index + 1);
  return String(index);
}

/**
 * Puts `value` at the place `steps` name. A place reached twice (`a=1&[a]=2`) collects both
 * values; a value where nested fields already are, or the reverse, is dropped. `__proto__` names
 * nothing.
 */
function place(root: Branch, steps: Step[], value: Leaf): void {
  let branch = root;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (step.kind === 'name' && step.name === '__proto__') return;
    if (i === steps.length - 1) {
      // `groups[]` sent twice is two entries, as `groups[]=a&groups[]=b` reads.
      const values = step.kind === 'push' && Array.isArray(value) ? value : [value];
      for (const v of values) {
        const name = memberName(branch, step);
        const prev = branch.members[name];
        if (prev === undefined) branch.members[name] = v;
        else if (Array.isArray(prev)) appendTo(prev, v);
        else if (typeof prev === 'string') branch.members[name] = [prev].concat(v);
      }
      return;
    }
    const name = memberName(branch, step);
    const next = branch.members[name];
    if (next === undefined) branch = branch.members[name] = new Branch();
    else if (next instanceof Branch) branch = next;
    else return;
  }
}

/** The finished value: a branch whose members all came by index is an array in index order, holes closed. */
function finish(value: Leaf | Branch, isRoot = false): unknown {
  if (!(value instanceof Branch)) return value;
  // Integer names come out of an object in ascending order, so its values are the array's entries.
  if (value.list && !isRoot) return Object.values(value.members).map((v) => finish(v));
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, member] of Object.entries(value.members)) out[name] = finish(member);
  return out;
}

/**
 * Reads form fields with bracketed names, as `qs` reads them (depth 5, objects without a
 * prototype): `strIds[0]` → an array, `custom_field[age]` → an object, `groups[]` → the next
 * entry. Takes a urlencoded string, or names already decoded with their values (multipart). Its
 * cost is linear in the input: each field is placed once, where qs merges each field into all it
 * has read so far, which costs the square of an array's length (20,000 `strIds[i]` took 6.6 s).
 * More than MAX_FIELDS fields is a 413.
 */
export function parseBracketed(input: string | Record<string, Leaf>): Record<string, unknown> {
  const fields = new Map<string, Leaf>();
  if (typeof input === 'string') {
    // qs reads `%5B` and `%5D` as brackets before anything else; so does this.
    const text = input.replace(/%5B/gi, '[').replace(/%5D/gi, ']');
    for (const piece of piecesOf(text)) {
      // A value may hold `=`; a name may too, inside brackets (`a[b=c]=d`), as qs splits it.
      const bracketEq = piece.indexOf(']=');
      const eq = bracketEq === -1 ? piece.indexOf('=') : bracketEq + 1;
      addValue(fields, decode(eq === -1 ? piece : piece.slice(0, eq)), eq === -1 ? '' : decode(piece.slice(eq + 1)));
    }
  } else {
    let count = 0;
    for (const [name, value] of Object.entries(input)) {
      count += typeof value === 'string' ? 1 : value.length;
      if (count > MAX_FIELDS) throw new AppError(413, TOO_MANY_FIELDS);
      addValue(fields, name, value);
    }
  }
  const root = new Branch();
  for (const [name, value] of fields) if (name !== '') place(root, stepsOf(name), value);
  return finish(root, true) as Record<string, unknown>;
}
