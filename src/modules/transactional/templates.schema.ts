import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { TransactionalTemplateTable, TransactionalTemplateVersionTable } from '../../db/types.js';
import { MAX_TEMPLATE_CHARS } from '../../delivery/handlebars.js';
import { Enum, Int, Text } from '../../http/schemas.js';
import { sqlDateTime } from '../../util/time.js';

export type TemplateRow = Selectable<TransactionalTemplateTable>;
export type VersionRow = Selectable<TransactionalTemplateVersionTable>;

/** The longest template or version name (SendGrid's). */
export const MAX_NAME = 100;
/** The longest `test_data` (JSON text). */
export const MAX_TEST_DATA = 1_048_576;

const SendGridTime = Type.String({ description: 'UTC, `YYYY-MM-DD HH:MM:SS` (SendGrid’s form).' });

export const TemplateIdParams = Type.Object({ template_id: Type.String({ maxLength: 100, description: 'The template’s id (`d-…`).' }) });
export const VersionIdParams = Type.Object({
  template_id: Type.String({ maxLength: 100, description: 'The template’s id (`d-…`).' }),
  version_id: Type.String({ maxLength: 100, description: 'The version’s id (a UUID).' }),
});

export const CreateTemplateBody = Type.Object({
  name: Text(MAX_NAME),
  generation: Type.Optional(Enum(['dynamic'])),
});
export const UpdateTemplateBody = Type.Object({ name: Type.Optional(Text(MAX_NAME)) });

export const ListTemplatesQuery = Type.Object({
  generations: Type.Optional(
    Type.String({
      maxLength: 20,
      description: '`dynamic`, `legacy` or `legacy,dynamic`; only dynamic templates exist here (default: `dynamic`).',
    }),
  ),
  page_size: Type.Optional(Int({ minimum: 1, maximum: 200, description: 'Templates per page, 1–200 (default 10).' })),
  page_token: Type.Optional(Type.String({ maxLength: 100, description: 'The `_metadata.next` page’s token of the previous answer.' })),
});

const versionFields = {
  name: Text(MAX_NAME),
  subject: Text(255),
  html_content: Type.Optional(Text(MAX_TEMPLATE_CHARS)),
  plain_content: Type.Optional(Text(MAX_TEMPLATE_CHARS)),
  generate_plain_content: Type.Optional(
    Type.Boolean({ description: 'Without `plain_content`, the text part is the HTML’s text (default true).' }),
  ),
  active: Type.Optional(Int({ minimum: 0, maximum: 1, description: '1 makes this the active version (the others become inactive).' })),
  editor: Type.Optional(Enum(['code', 'design'])),
  test_data: Type.Optional(Text(MAX_TEST_DATA)),
  template_id: Type.Optional(Type.String({ maxLength: 100, description: 'Ignored: the path names the template.' })),
};
export const CreateVersionBody = Type.Object(versionFields);
export const UpdateVersionBody = Type.Partial(Type.Object(versionFields));
export type VersionInput = Static<typeof UpdateVersionBody>;

export const Version = Type.Object({
  id: Type.String(),
  template_id: Type.String(),
  active: Type.Integer({ description: '1 for the template’s active version, else 0.' }),
  name: Type.String(),
  subject: Type.String(),
  html_content: Type.String(),
  plain_content: Type.String(),
  generate_plain_content: Type.Boolean(),
  editor: Type.String(),
  test_data: Type.Optional(Type.String()),
  updated_at: SendGridTime,
});
export type VersionShape = Static<typeof Version>;

const VersionSummary = Type.Object({
  id: Type.String(),
  template_id: Type.String(),
  active: Type.Integer(),
  name: Type.String(),
  subject: Type.String(),
  generate_plain_content: Type.Boolean(),
  editor: Type.String(),
  updated_at: SendGridTime,
});

export const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  generation: Type.Literal('dynamic'),
  updated_at: SendGridTime,
  versions: Type.Array(Version),
});
export type TemplateShape = Static<typeof Template>;

const TemplateSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  generation: Type.Literal('dynamic'),
  updated_at: SendGridTime,
  versions: Type.Array(VersionSummary),
});

export const TemplateList = Type.Object({
  result: Type.Array(TemplateSummary),
  _metadata: Type.Object({
    self: Type.String(),
    next: Type.Optional(Type.String()),
    count: Type.Integer({ description: 'How many templates the listed generations hold in all.' }),
  }),
});

const sendGridTime = (iso: string) => sqlDateTime(new Date(iso));

/** A version row → SendGrid's version. */
export function toVersion(row: VersionRow, templateId: string): VersionShape {
  return {
    id: row.public_id,
    template_id: templateId,
    active: row.active ? 1 : 0,
    name: row.name,
    subject: row.subject,
    html_content: row.html_content,
    plain_content: row.plain_content,
    generate_plain_content: Boolean(row.generate_plain_content),
    editor: row.editor,
    ...(row.test_data !== null ? { test_data: row.test_data } : {}),
    updated_at: sendGridTime(row.updated_at),
  };
}

/** A template row and its versions → SendGrid's template. */
export function toTemplate(row: TemplateRow, versions: VersionRow[]): TemplateShape {
  return {
    id: row.public_id,
    name: row.name,
    generation: 'dynamic',
    updated_at: sendGridTime(row.updated_at),
    versions: versions.map((v) => toVersion(v, row.public_id)),
  };
}
