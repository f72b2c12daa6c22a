import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../http/schemas.js';

/** A design may be large (10 MB bodies are accepted); this bounds one field of it. */
const DESIGN_MAX = 5 * 1024 * 1024;

/** `track_clicks` of a send or automation email: 1 (default) rewrites the design's links for click tracking. */
export const TrackClicks = Type.Unsafe<0 | 1>({
  type: 'integer',
  enum: [0, 1],
  default: 1,
  description:
    '1 (default): every `http:`/`https:` link of the HTML part (but the unsubscribe link) goes through the click redirect `/t/click/<token>`, which counts clicks; 0: the links are left as they are.',
});

/**
 * The design fields of a mailing's body (single sends, automation emails); their rules between
 * fields and against the template list are `checkDesign`'s.
 */
export const designFields = {
  template_id: Id,
  template_json: Type.Optional(Type.String({ maxLength: DESIGN_MAX })),
  template_html: Type.Optional(Type.String({ maxLength: DESIGN_MAX })),
};

/** A design template as the API returns it, fields in the order clients of the original service expect. */
export const DesignTemplateSchema = Type.Object({
  id: Type.Integer(),
  template_name: Type.String(),
  preview_image: Type.String({ description: 'The file name of its preview, served at `/images/templates/<preview_image>`.' }),
  json_code: Type.String({ description: "The MJML document in MJML's JSON form, as text." }),
  html_code: Type.String({ description: 'The HTML compiled from `json_code`, with its `((placeholders))`.' }),
  is_blank: Type.Union([Type.Literal(0), Type.Literal(1)]),
  created_at: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.Union([Type.String(), Type.Null()]),
});
export type DesignTemplate = Static<typeof DesignTemplateSchema>;

/** Neither list takes input; unknown query parameters are ignored. */
export const NoQuery = Type.Object({});

/** The API shape of a shipped template: its catalog entry, MJML source and compiled HTML. */
export function toDesignTemplate(
  entry: { id: number; template_name: string; is_blank: 0 | 1 },
  previewImage: string,
  jsonCode: string,
  htmlCode: string,
  timestamp: string | null,
): DesignTemplate {
  return {
    id: entry.id,
    template_name: entry.template_name,
    preview_image: previewImage,
    json_code: jsonCode,
    html_code: htmlCode,
    is_blank: entry.is_blank,
    created_at: timestamp,
    updated_at: timestamp,
  };
}
