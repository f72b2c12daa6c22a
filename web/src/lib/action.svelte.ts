/**
 * The notes of a page's changes (add, save, delete …): the error, the success text and the
 * form's field errors, cleared before each change and set by its outcome.
 */
import { ApiError, messageOf } from './api';

export class Action {
  error = $state('');
  status = $state('');
  fieldErrors = $state<Record<string, string[]>>({});

  /**
   * Runs one change: `work` returns the success text shown once it is done. With `form`, the field
   * errors are cleared first and filled from a refusal.
   */
  async run(work: () => Promise<string>, form = false): Promise<void> {
    this.error = '';
    this.status = '';
    if (form) this.fieldErrors = {};
    try {
      this.status = await work();
    } catch (e) {
      this.error = messageOf(e);
      if (form && e instanceof ApiError) this.fieldErrors = e.fields;
    }
  }
}
