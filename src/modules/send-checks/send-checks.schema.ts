import { Type, type Static } from '@sinclair/typebox';
import { Enum, Success } from '../../http/schemas.js';
import { MAX_VARIANTS } from '../single-sends/ab-tests.schema.js';
import { LINK_KINDS, type LinkKind } from './send-checks.links.js';

export const CheckQuery = Type.Object({
  utr: Type.Optional(Type.String({ maxLength: 64, description: 'The single send to check (as saved).' })),
});
export type CheckInput = Static<typeof CheckQuery>;

/** The kinds of warning, in the order the check looks for them. */
export const WARNING_TYPES = [
  'design_invalid',
  'link_anchor',
  'link_empty',
  'link_not_web',
  'unknown_placeholder',
  'sender_not_verified',
  'sender_domain_unauthenticated',
  'sender_domain_failed',
  'no_recipients',
] as const;
export type WarningType = (typeof WARNING_TYPES)[number];

/** The variant a link or warning belongs to: only in the check of an A/B test. */
const VariantIndex = Type.Optional(
  Type.Integer({
    minimum: 0,
    maximum: MAX_VARIANTS,
    description:
      "A/B tests only: the variant whose design or subject it comes from (0: the send's own; a variant without a design of its own " +
      "shares variant 0's, so its links and their warnings are listed once, under 0). Absent for a send without a test.",
  }),
);

const Link = Type.Object({
  url: Type.String({ description: 'The `href` as written (entities decoded, `((placeholders))` kept).' }),
  text: Type.String({ description: "The link's text, else the `alt` of its image, else empty." }),
  kind: Type.Unsafe<LinkKind>({
    ...Enum(LINK_KINDS),
    description:
      '`web` (http or https), `mailto`, `tel`, `placeholder` (an href that starts with a `((placeholder))`: the unsubscribe ' +
      "link, or a contact's value): these work. `anchor` (`#…`), `empty`, `other` (a relative path, `javascript:`, a " +
      'web address without `https://`, …): these go nowhere for the reader and each has a warning.',
  }),
  variant: VariantIndex,
});

const Warning = Type.Object({
  type: Type.Unsafe<WarningType>({ ...Enum(WARNING_TYPES), description: 'What is wrong (see the description of the route).' }),
  message: Type.String({ description: 'The warning in words, for a person (`Variant 1: …` for a variant of an A/B test).' }),
  url: Type.Optional(Type.String({ description: 'For a link warning: the link.' })),
  text: Type.Optional(Type.String({ description: "For a link warning: the link's text." })),
  variant: VariantIndex,
});

export const CheckAnswer = Success(
  Type.Object({
    links: Type.Array(Link, {
      description: "Every link of the design, footer included, in document order (an A/B test: variant 0's, then each own design's).",
    }),
    recipients: Type.Integer({ minimum: 0, description: 'As `GET /single-send/recipients-count`.' }),
    warnings: Type.Array(Warning, { description: 'What deserves a look before sending; empty when nothing does.' }),
  }),
  'The check of the send as saved.',
);
export type SendCheck = Static<typeof CheckAnswer>['message'];
export type CheckWarning = SendCheck['warnings'][number];
