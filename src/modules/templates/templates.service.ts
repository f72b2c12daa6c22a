import { PLACEHOLDER_NAMES } from '../../delivery/placeholders.js';
import { shippedTemplates } from './templates.catalog.js';
import type { DesignTemplate } from './templates.schema.js';

/**
 * Every shipped design template, ordered by id (the blank one first, as a picker shows it). They
 * are global: the same for every account, compiled once and kept.
 */
export async function listDesignTemplates(): Promise<DesignTemplate[]> {
  return (await shippedTemplates()).map((t) => t.api);
}

/** The placeholder names a design may use, in the order editors list them (21 names). */
export function listPlaceholderNames(): string[] {
  return [...PLACEHOLDER_NAMES];
}
