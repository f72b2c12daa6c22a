import { PLACEHOLDER_NAMES } from '../../delivery/placeholders.js';
import { previewImageOf, shippedTemplates, TEMPLATES_TIMESTAMP } from '../../delivery/designs.js';
import { toDesignTemplate, type DesignTemplate } from './templates.schema.js';

/**
 * Every shipped design template, ordered by id (the blank one first, as a picker shows it). They
 * are global: the same for every account, compiled once and kept.
 */
export async function listDesignTemplates(): Promise<DesignTemplate[]> {
  // Compact JSON: the files are indented for people, the API sends them to machines.
  return (await shippedTemplates()).map((t) =>
    toDesignTemplate(t.entry, previewImageOf(t.entry), JSON.stringify(t.doc), t.html, TEMPLATES_TIMESTAMP),
  );
}

/** The placeholder names a design may use, in the order editors list them (21 names). */
export function listPlaceholderNames(): string[] {
  return [...PLACEHOLDER_NAMES];
}
