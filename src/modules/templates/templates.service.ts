import { createHash } from 'node:crypto';
import { PLACEHOLDER_NAMES } from '../../delivery/placeholders.js';
import { shippedTemplates } from './templates.catalog.js';

export interface PreparedBody {
  body: string;
  etag: string;
}

let templatesBody: Promise<PreparedBody> | null = null;

function prepare(message: unknown): PreparedBody {
  const body = JSON.stringify({ status: 'success', message });
  return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
}

/**
 * The `/get-design/template` envelope: every shipped template, ordered by id (the blank one
 * first, as a picker shows it). Serialised once: the templates only change with a release.
 */
export function designTemplatesBody(): Promise<PreparedBody> {
  templatesBody ??= shippedTemplates()
    .then((all) => prepare({ templates: all.map((t) => t.api) }))
    .catch((err) => {
      templatesBody = null;
      throw err;
    });
  return templatesBody;
}

const contentsBody = prepare({ contents: PLACEHOLDER_NAMES });

/** The `/get-dynamic/content` envelope: the 21 placeholder names in the spec's order. */
export function dynamicContentBody(): PreparedBody {
  return contentsBody;
}
