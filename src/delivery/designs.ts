import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileMjml, parseDesign, type MjmlNode } from './mjml.js';

/**
 * The shipped design templates. They are global, the same for every account, and
 * live in the code rather than the database: they change with releases, not with use.
 * Sources: `assets/templates/<slug>.json` (MJML JSON); previews: `assets/templates/<slug>.png`.
 */
export interface CatalogEntry {
  id: number;
  slug: string;
  template_name: string;
  is_blank: 0 | 1;
}

export const CATALOG: readonly CatalogEntry[] = [
  { id: 1, slug: 'blank', template_name: 'Blank', is_blank: 1 },
  { id: 2, slug: 'newsletter', template_name: 'Newsletter', is_blank: 0 },
  { id: 3, slug: 'announcement', template_name: 'Announcement', is_blank: 0 },
  { id: 4, slug: 'welcome', template_name: 'Welcome', is_blank: 0 },
  { id: 5, slug: 'receipt', template_name: 'Receipt', is_blank: 0 },
  { id: 6, slug: 'letter', template_name: 'Plain letter', is_blank: 0 },
];

/** The id of the blank template: the caller supplies the design itself. */
export const BLANK_TEMPLATE_ID = 1;

/** Fixed: the templates ship with the release, they are not created at run time. */
export const TEMPLATES_TIMESTAMP = '2025-01-01T00:00:00.000000Z';

/** Where the sources and preview images are, from src/ and from dist/ alike. */
export const TEMPLATE_ASSETS_DIR = fileURLToPath(new URL('../../assets/templates/', import.meta.url));

export interface ShippedTemplate {
  entry: CatalogEntry;
  doc: MjmlNode;
  /** The design compiled to HTML (without the footer). */
  html: string;
}

let loaded: Promise<ShippedTemplate[]> | null = null;

/** The preview image's file name of a catalog entry. */
export function previewImageOf(entry: CatalogEntry): string {
  return `${entry.slug}.png`;
}

async function load(): Promise<ShippedTemplate[]> {
  const out: ShippedTemplate[] = [];
  for (const entry of CATALOG) {
    const json = readFileSync(TEMPLATE_ASSETS_DIR + `${entry.slug}.json`, 'utf8');
    const doc = parseDesign(json, `shipped template ${entry.slug}`);
    const html = await compileMjml(doc, `shipped template ${entry.slug}`);
    out.push({ entry, doc, html });
  }
  return out;
}

/** Every shipped template, read and compiled once (first use) and then kept, ordered by id. */
export function shippedTemplates(): Promise<ShippedTemplate[]> {
  loaded ??= load().catch((err) => {
    loaded = null;
    throw err;
  });
  return loaded;
}

/** One shipped template by id, or undefined. */
export async function findShippedTemplate(id: number): Promise<ShippedTemplate | undefined> {
  return (await shippedTemplates()).find((t) => t.entry.id === id);
}

/** Whether `id` names a shipped template (no compile needed: single sends check `template_id`). */
export function isTemplateId(id: number): boolean {
  return CATALOG.some((e) => e.id === id);
}
