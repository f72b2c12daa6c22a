/**
 * The A/B test of a single send as the API takes and shows it: the parameters of create and
 * update, the test in details, the variants' figures in the statistics, the manual pick.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SingleSendVariantTable } from '../../db/types.js';
import type { FieldErrors } from '../../http/errors.js';
import { HeaderText, Id, Int, Nullable, Success } from '../../http/schemas.js';
import { StatsShape } from '../../delivery/statistics.js';
import { designFields } from '../templates/templates.schema.js';

export type VariantRow = Selectable<SingleSendVariantTable>;

/** Variants besides the send's own (variant 0): 1 to 4, so 2 to 5 in all. */
export const MAX_VARIANTS = 4;

/** What decides the winner: people's unique opens, or unique clicks, over delivered. */
export const METRICS = ['opens', 'clicks'] as const;
export type Metric = (typeof METRICS)[number];

const VariantInput = Type.Object(
  {
    subject: HeaderText(),
    template_id: Type.Optional(designFields.template_id),
    template_json: designFields.template_json,
    template_html: designFields.template_html,
    design_id: Type.Optional(Id),
  },
  {
    description:
      "One variant: its subject, and its own design (a template, `template_json`, `template_html`, or a saved design's `design_id`), " +
      "or none: then it has the send's design.",
  },
);

/** The A/B test's parameters of create and update (with `ab_test` 1; ignored otherwise). */
export const abTestFields = {
  ab_test: Type.Optional(
    Type.Unsafe<0 | 1>({
      type: 'integer',
      enum: [0, 1],
      default: 0,
      description: "1: an A/B test. The send's own subject and design are variant 0; `variants[1]` … `variants[4]` are the others.",
    }),
  ),
  variants: Type.Optional(
    Type.Array(VariantInput, {
      maxItems: MAX_VARIANTS,
      description:
        '`variants[1]` … `variants[4]` (in JSON: an array, its first entry variant 1): each with `subject`, and optionally its own design. ' +
        'Required with `ab_test` 1.',
    }),
  ),
  ab_test_percent: Type.Optional(
    Int({
      minimum: 10,
      maximum: 50,
      description: 'The share of recipients in the test (percent), split evenly and at random over the variants.',
    }),
  ),
  ab_winner_metric: Type.Optional(
    Type.Unsafe<Metric>({
      type: 'string',
      enum: [...METRICS],
      description: "`opens` (people's unique opens) or `clicks` (people's unique clicks), each over delivered: the highest rate wins.",
    }),
  ),
  ab_wait_minutes: Type.Optional(
    Int({ minimum: 1, maximum: 4320, description: 'How long after the test share went out the winner is chosen.' }),
  ),
};
export type VariantInput = Static<typeof VariantInput>;

const VariantShape = Type.Object({
  index: Type.Integer({ minimum: 0, maximum: MAX_VARIANTS, description: "0: the send's own subject and design." }),
  subject: Type.String(),
  template_id: Nullable(Type.Integer()),
  template_json: Nullable(Type.String()),
  template_html: Nullable(Type.String()),
  design_id: Nullable(Type.Integer({ description: 'The saved design its `template_json` was copied from.' })),
});

/** What details add about the test (in every send; `ab_test` 0 and the rest null or empty without one). */
export const abTestShape = {
  ab_test: Type.Integer({ minimum: 0, maximum: 1 }),
  ab_test_percent: Nullable(Type.Integer()),
  ab_winner_metric: Nullable(Type.String({ description: '`opens` or `clicks`.' })),
  ab_wait_minutes: Nullable(Type.Integer()),
  ab_wait_ends_at: Nullable(
    Type.String({ description: 'When the wait ends (UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`): null until the test share went out.' }),
  ),
  variants: Type.Array(VariantShape, {
    description:
      "Every variant, 0 (the send's own) first; a variant whose design fields are all null has the send's design. Empty without a test.",
  }),
  ab_winner: Nullable(Type.Integer({ description: "The winning variant's index; null until it is chosen." })),
};

const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** The statistics of a single send: the shared ones, and its variants'. */
export const SendStatsAnswer = Success(
  Type.Object({
    stats: Type.Object(
      {
        ...StatsShape.properties,
        variants: Type.Array(
          Type.Object({
            index: Type.Integer({ minimum: 0, maximum: MAX_VARIANTS }),
            subject: Type.String(),
            triggered: Count('Messages of the test share with this variant.'),
            delivered: Count('Of them, accepted by the receiving server.'),
            unique_human_opens: Count("Of them, opened by a person (machines' opens left out)."),
            unique_clicks: Count("Of them, clicked by a person (scanners' clicks left out)."),
            winner: Type.Boolean(),
          }),
          {
            description:
              "An A/B test's variants with the figures of their test share (the winner's send to the rest counts in the send's figures only); " +
              'empty without a test.',
          },
        ),
      },
      { description: StatsShape.description },
    ),
  }),
);

export const AbWinnerBody = Type.Object({
  utr: Type.String({ maxLength: 64 }),
  variant: Int({ minimum: 0, maximum: MAX_VARIANTS, description: "The winning variant's index (0: the send's own)." }),
});

export const AbWinnerAnswer = Success(
  Type.Object({
    utr: Type.String(),
    ab_winner: Type.Integer(),
    queued: Type.Integer({ minimum: 0, description: 'Messages of the winner queued for the rest of the recipients.' }),
  }),
  'The winner is chosen; its mail goes to every recipient not in the test, at once.',
);

/** A variant's design fields as stored (all null: the send's). */
export interface VariantDesign {
  template_id: number | null;
  template_json: string | null;
  template_html: string | null;
  design_id: number | null;
}

/** The test's fields of a send in details; `variants` are its rows 1…4. */
export function toAbTest(
  row: {
    ab_test: number;
    ab_test_percent: number | null;
    ab_winner_metric: string | null;
    ab_wait_minutes: number | null;
    ab_wait_ends_at: string | null;
    ab_winner: number | null;
    subject: string;
    template_id: number;
    template_json: string | null;
    template_html: string | null;
  },
  variants: readonly VariantRow[],
) {
  const on = Number(row.ab_test) === 1;
  const own = { template_id: row.template_id, template_json: row.template_json, template_html: row.template_html, design_id: null };
  return {
    ab_test: on ? 1 : 0,
    ab_test_percent: row.ab_test_percent === null ? null : Number(row.ab_test_percent),
    ab_winner_metric: row.ab_winner_metric,
    ab_wait_minutes: row.ab_wait_minutes === null ? null : Number(row.ab_wait_minutes),
    ab_wait_ends_at: row.ab_wait_ends_at,
    variants: on
      ? [
          { index: 0, subject: row.subject, ...own },
          ...variants.map((v) => ({
            index: Number(v.variant),
            subject: v.subject,
            template_id: v.template_id === null ? null : Number(v.template_id),
            template_json: v.template_json,
            template_html: v.template_html,
            design_id: v.design_id === null ? null : Number(v.design_id),
          })),
        ]
      : [],
    ab_winner: row.ab_winner === null ? null : Number(row.ab_winner),
  };
}

/**
 * The schema's failures of the variants named as the client named them: the form's
 * `variants[1]` is the array's first entry, so `variants.0.subject` is reported as
 * `variants.1.subject` (in the message too).
 */
export function renumberVariants(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [field, list] of Object.entries(errors)) {
    const m = /^variants\.(\d+)(\..*)?$/.exec(field);
    if (!m) {
      out[field] = list;
      continue;
    }
    const from = `variants.${m[1]}`;
    const to = `variants.${Number(m[1]) + 1}`;
    out[to + (m[2] ?? '')] = list.map((text) => text.replace(from, to));
  }
  return out;
}
