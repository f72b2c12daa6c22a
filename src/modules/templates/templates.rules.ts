/**
 * The design rules every mailing shares (single sends, automation emails): which template, and at
 * most one design of the caller's own, JSON or HTML.
 */
import type { Config } from '../../config.js';
import { validateDesign } from '../../delivery/render.js';
import { label, messages, type Rules } from '../../http/messages.js';
import { isTemplateId } from '../../delivery/designs.js';

/** The design fields of a mailing's body. */
export interface DesignInput {
  template_id: number;
  template_json?: string;
  template_html?: string;
}

/** An empty form field means "not given". */
const given = (s: string | undefined): string | null => (s !== undefined && s.trim() !== '' ? s : null);

/**
 * Checks the design fields (the schema's failures are already in `rules`): a template of the list,
 * at most one of JSON and HTML, and a JSON design that compiles. `prefix` names nested fields (an
 * A/B test's `variants.1.`). Returns the design columns to store.
 */
export async function checkDesign(
  input: DesignInput,
  rules: Rules,
  prefix = '',
): Promise<{ template_json: string | null; template_html: string | null }> {
  const [id, jsonField, htmlField] = ['template_id', 'template_json', 'template_html'].map((f) => prefix + f);
  if (!rules.failed(id) && !isTemplateId(input.template_id)) rules.add(id, messages.invalid(id));
  const json = given(input.template_json);
  const html = given(input.template_html);
  if (json !== null && html !== null) {
    rules.add(jsonField, `The ${label(jsonField)} field prohibits ${label(htmlField)} from being present.`);
    rules.add(htmlField, `The ${label(htmlField)} field prohibits ${label(jsonField)} from being present.`);
  } else if (json !== null && !rules.failed(jsonField)) {
    const failure = await validateDesign(json, label(jsonField));
    if (failure) rules.add(jsonField, failure);
  }
  return { template_json: json, template_html: html };
}

/** The public address of a template's preview image (`preview_image`, or an automation email's `preview_img`). */
export function previewImageUrl(config: Pick<Config, 'publicUrl'>, file: string): string {
  return `${config.publicUrl}/images/templates/${encodeURIComponent(file)}`;
}
