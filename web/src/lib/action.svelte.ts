/**
 * The notes of a page's changes (add, save, delete …): the error, the success text and the
 * form's field errors. Only the latest change's notes are shown: an action that starts (or a note
 * that is set) hides every other action's notes, on this page and in its parts, so an old refusal
 * never stands beside a newer success.
 */
import { tick } from 'svelte';
import { ApiError, messageOf } from './api';
import { fieldProblems, focusFirstInvalid, type FieldLabels } from './form-errors';

/** Which notes are the latest: the mark of the action that last started or was given a note. */
const notes = $state({ latest: 0 });
let marks = 0;

/** The form holding the focus (the one being submitted), else the page's main part. */
function formOfFocus(): ParentNode | null {
  return (document.activeElement as Element | null)?.closest('form') ?? document.querySelector('main');
}

export class Action {
  #error = $state('');
  #status = $state('');
  #fieldErrors = $state<Record<string, string[]>>({});
  #mark = $state(0);

  /**
   * `labels`: the form's fields in its order and their labels (or a function giving them, for a
   * form whose fields change), used to word and order its field errors.
   */
  constructor(private readonly labels: FieldLabels | (() => FieldLabels) = []) {}

  /** Whether this action's notes are the latest ones. */
  get current(): boolean {
    return this.#mark === notes.latest;
  }

  get error(): string {
    return this.current ? this.#error : '';
  }
  set error(text: string) {
    if (text) this.#claim();
    this.#error = text;
  }

  get status(): string {
    return this.current ? this.#status : '';
  }
  set status(text: string) {
    if (text) this.#claim();
    this.#status = text;
  }

  /** The field errors of the last refusal (field → messages worded with the form's labels). */
  get fieldErrors(): Record<string, string[]> {
    return this.current ? this.#fieldErrors : {};
  }
  set fieldErrors(errors: Record<string, string[]>) {
    if (Object.keys(errors).length) this.#claim();
    this.#fieldErrors = errors;
  }

  /** Hides every other action's notes. */
  #claim(): void {
    this.#mark = notes.latest = ++marks;
  }

  /**
   * Runs one change: `work` returns the success text shown once it is done. With `form`, the field
   * errors are cleared first and filled from a refusal, worded with the form's labels and in its
   * order, and the focus moves to the first field marked invalid.
   */
  async run(work: () => Promise<string>, form = false): Promise<void> {
    const within = formOfFocus();
    this.#claim();
    this.#error = '';
    this.#status = '';
    if (form) this.#fieldErrors = {};
    try {
      this.#status = await work();
    } catch (e) {
      this.#error = messageOf(e);
      if (form && e instanceof ApiError) await this.#showFieldErrors(e.fields, within);
    }
  }

  /**
   * Refuses a change before it is sent (what the page itself checks, e.g. a choice left empty):
   * `fields` shown as a refusal's field errors are.
   */
  async refuse(fields: Record<string, string[]>): Promise<void> {
    const within = formOfFocus();
    this.#claim();
    this.#status = '';
    await this.#showFieldErrors(fields, within);
  }

  /** Shows field errors (when there are any): on the fields, in the alert in the form's order, the focus on the first. */
  async #showFieldErrors(fields: Record<string, string[]>, within: ParentNode | null): Promise<void> {
    const problems = fieldProblems(fields, typeof this.labels === 'function' ? this.labels() : this.labels);
    if (!problems.length) return;
    this.#fieldErrors = Object.fromEntries(problems.map((p) => [p.field, p.messages]));
    this.#error = problems.flatMap((p) => p.messages).join(' ');
    await tick();
    focusFirstInvalid(within);
  }
}
