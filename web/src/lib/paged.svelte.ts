/**
 * One list of the API read a page at a time (`page`, `per_page`; the answer's `meta.total`), so a
 * list of thousands of rows stays light. The path, the list's key in the answer and the query are
 * checked against the service's document, and the rows take the type of the answer's list.
 * `Pager.svelte` moves through it.
 */
import { api, messageOf, type GetPath, type Message, type Query } from './api';

export const PER_PAGE = 50;

/** The GET paths whose answer counts its records (`meta.total`): the lists read a page at a time. */
export type PagedPath = {
  [P in GetPath]: 'meta' extends keyof Message<P>
    ? NonNullable<Message<P>['meta' & keyof Message<P>]> extends { total: number }
      ? P
      : never
    : never;
}[GetPath];

/** The keys of the answer of `P` that hold a list. */
export type ListKey<P extends PagedPath> = {
  [K in keyof Message<P>]: Message<P>[K] extends readonly unknown[] ? K : never;
}[keyof Message<P>];

/** A row of the list `K` of the answer of `P`. */
export type Row<P extends PagedPath, K extends ListKey<P>> = Message<P>[K] extends ReadonlyArray<infer R> ? R : never;

/** Where a list stands, as the Pager shows it. */
export interface Pages {
  readonly page: number;
  /** How many pages; null while not known (a search counts nothing: its last page tells). */
  readonly pages: number | null;
  /** How many records in all; null while not known. */
  readonly total: number | null;
  /** Whether a page follows this one. */
  readonly hasMore: boolean;
  readonly loading: boolean;
  go(page: number): void;
}

/** A list of rows of type `T` read a page at a time (what the pages showing one need of it). */
export interface PageList<T> extends Pages {
  readonly items: T[];
  readonly error: string;
  load(): Promise<void>;
  go(page: number): Promise<void>;
}

export interface PagedOptions<P extends PagedPath, K extends ListKey<P>> {
  /** The query besides the page (filters, the parent record's id), read at each load. */
  query?: () => Omit<Query<P>, 'page' | 'per_page'>;
  /** Rows a page; 50 unless given. */
  perPage?: number;
  /** Called with the rows of each page loaded. */
  loaded?: (items: Array<Row<P, K>>) => void;
}

export class Paged<P extends PagedPath, K extends ListKey<P>> implements PageList<Row<P, K>> {
  items = $state<Array<Row<P, K>>>([]);
  page = $state(1);
  total = $state(0);
  loading = $state(true);
  error = $state('');
  readonly pages = $derived(Math.max(1, Math.ceil(this.total / this.perPage)));
  readonly hasMore = $derived(this.page < this.pages);

  constructor(
    private readonly path: P,
    private readonly key: K,
    private readonly options: PagedOptions<P, K> = {},
  ) {}

  get perPage(): number {
    return this.options.perPage ?? PER_PAGE;
  }

  /** Loads the current page (back one page when the current one became empty, e.g. after a delete). */
  async load(): Promise<void> {
    this.loading = true;
    this.error = '';
    try {
      const query = { ...this.options.query?.(), page: this.page, per_page: this.perPage };
      // The path is one of the paged lists (checked by the constructor's types); its query too.
      const get = api.get as (path: P, query: object) => Promise<Message<P>>;
      const m = await get(this.path, query);
      this.items = m[this.key] as Array<Row<P, K>>;
      this.total = (m as { meta?: { total: number } }).meta?.total ?? this.items.length;
      if (this.items.length === 0 && this.page > 1) {
        this.page = this.pages;
        return this.load();
      }
      this.options.loaded?.(this.items);
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.loading = false;
    }
  }

  /** Shows page `page` (once loaded). */
  go(page: number): Promise<void> {
    this.page = page;
    return this.load();
  }
}
