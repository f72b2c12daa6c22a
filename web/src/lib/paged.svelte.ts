/**
 * One list of the API read a page at a time (`page`, `per_page`; the answer's `meta.total`), so
 * a list of thousands of rows stays light. Pages of Settings make one per table.
 */
import { client } from '../../lib/auth.svelte';
import { messageOf, type Query } from '../../lib/api';

export const PER_PAGE = 50;

export class Paged<T> {
  items = $state<T[]>([]);
  page = $state(1);
  total = $state(0);
  loading = $state(true);
  error = $state('');
  readonly pages = $derived(Math.max(1, Math.ceil(this.total / PER_PAGE)));

  constructor(
    private readonly path: string,
    private readonly key: string,
    private readonly query: () => Query = () => ({}),
  ) {}

  /** Loads the current page (back one page when the current one became empty, e.g. after a delete). */
  async load(): Promise<void> {
    this.loading = true;
    this.error = '';
    try {
      const m = await client().get<Record<string, unknown> & { meta: { total: number } }>(this.path, {
        ...this.query(),
        page: this.page,
        per_page: PER_PAGE,
      });
      this.items = m[this.key] as T[];
      this.total = m.meta.total;
      if (this.items.length === 0 && this.page > 1) {
        this.page = this.pages;
        return this.load();
      }
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.loading = false;
    }
  }

  go(page: number): void {
    this.page = page;
    void this.load();
  }
}
