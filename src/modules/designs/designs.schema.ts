import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { DesignTable } from '../../db/types.js';
import { Id, ListOf, PagingQuery, QueryIds, Success, Timestamp } from '../../http/schemas.js';

export type DesignRow = Selectable<DesignTable>;

/** A design may be large (10 MB bodies are accepted); this bounds one field of it, as for a send's design. */
const DESIGN_MAX = 5 * 1024 * 1024;

const Name = Type.String({ minLength: 1, maxLength: 255, description: "The design's name (yours; never mailed)." });
const TemplateJson = Type.String({
  minLength: 1,
  maxLength: DESIGN_MAX,
  description:
    'An MJML document in JSON form (`{tagName, attributes, children, content}`, root `mjml` with an `mj-body`), as text. ' +
    "It is checked and compiled as a send's `template_json` is; `((placeholders))` stay in it.",
});

export const CreateDesignBody = Type.Object({ name: Name, template_json: TemplateJson });
export type DesignInput = Static<typeof CreateDesignBody>;
export const UpdateDesignBody = Type.Object({ id: Id, name: Type.Optional(Name), template_json: Type.Optional(TemplateJson) });
export type DesignUpdate = Static<typeof UpdateDesignBody>;
export const DuplicateDesignBody = Type.Object({ id: Id });
export const DesignIdQuery = QueryIds('id');
export const ListDesignsQuery = PagingQuery;

/** What `toDesign` returns. */
export const DesignShape = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    template_json: Type.String({ description: 'The MJML document in JSON form, as text.' }),
    html_code: Type.String({ description: 'The HTML compiled from `template_json`, with its `((placeholders))`.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    description: "A saved design of the account. A send or automation email uses it with `template_id` 1 and the design's `template_json`.",
  },
);

export const DesignList = ListOf('designs', DesignShape, "The account's saved designs, newest first.");
export const DesignDetails = Success(Type.Object({ design: DesignShape }), 'The design.');

/** The API shape of a design. */
export function toDesign(row: DesignRow) {
  return {
    id: row.id,
    name: row.name,
    template_json: row.template_json,
    html_code: row.html_code,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type Design = ReturnType<typeof toDesign>;
