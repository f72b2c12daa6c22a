/**
 * The rules of an A/B test's parameters that a schema cannot say: with `ab_test` 1 the share,
 * metric, wait and at least one variant are required; each variant's design follows the send's
 * design rules, or is a saved design of the account.
 */
import type { AppDeps } from '../../deps.js';
import { BLANK_TEMPLATE_ID } from '../../delivery/designs.js';
import { label, messages, type Rules } from '../../http/messages.js';
import { findDesign } from '../designs/designs.queries.js';
import { checkDesign } from '../templates/templates.rules.js';
import type { Metric, VariantDesign } from './ab-tests.schema.js';
import type { SingleSendInput } from './single-sends.schema.js';

/** The test's columns of a send. */
export interface AbTestColumns {
  ab_test: number;
  ab_test_percent: number | null;
  ab_winner_metric: Metric | null;
  ab_wait_minutes: number | null;
}

/** A variant to store: its index (1…4), subject and design (all null: the send's). */
export type VariantValues = VariantDesign & { variant: number; subject: string };

/** No test: what a send without one stores. */
const NO_TEST: AbTestColumns = { ab_test: 0, ab_test_percent: null, ab_winner_metric: null, ab_wait_minutes: null };

const requiredIfTest = (field: string) => `The ${label(field)} field is required when ab test is 1.`;

/** One variant's design: a saved design (copied as `template_json`), its own fields, or none (the send's). */
async function checkVariantDesign(
  deps: AppDeps,
  userId: number,
  input: NonNullable<SingleSendInput['variants']>[number],
  prefix: string,
  rules: Rules,
): Promise<VariantDesign> {
  const none: VariantDesign = { template_id: null, template_json: null, template_html: null, design_id: null };
  if (input.design_id !== undefined) {
    const field = `${prefix}design_id`;
    for (const other of ['template_json', 'template_html'] as const)
      if (input[other] !== undefined) rules.add(field, `The ${label(field)} field prohibits ${label(prefix + other)} from being present.`);
    if (rules.failed(field)) return none;
    const design = await findDesign(deps.database.db, userId, input.design_id);
    if (!design) {
      rules.add(field, messages.invalid(field));
      return none;
    }
    await checkDesign({ template_id: input.template_id ?? BLANK_TEMPLATE_ID }, rules, prefix);
    return {
      template_id: input.template_id ?? BLANK_TEMPLATE_ID,
      template_json: design.template_json,
      template_html: null,
      design_id: design.id,
    };
  }
  if (input.template_id === undefined && input.template_json === undefined && input.template_html === undefined) return none;
  // Without a template of its own, a variant's HTML or JSON stands on the blank template.
  const templateId = input.template_id ?? BLANK_TEMPLATE_ID;
  const design = await checkDesign({ ...input, template_id: templateId }, rules, prefix);
  return { template_id: templateId, ...design, design_id: null };
}

/**
 * Checks the A/B test's parameters (the schema's failures, renumbered, are already in `rules`)
 * and returns its columns and variants; without `ab_test` 1 the other parameters are ignored and
 * the send has no test. A winner chosen on clicks needs tracked links (`track_clicks` 1).
 */
export async function checkAbTest(
  deps: AppDeps,
  userId: number,
  input: SingleSendInput,
  rules: Rules,
): Promise<{ columns: AbTestColumns; variants: VariantValues[] }> {
  if (input.ab_test !== 1) return { columns: NO_TEST, variants: [] };
  for (const field of ['ab_test_percent', 'ab_winner_metric', 'ab_wait_minutes'] as const)
    if (input[field] === undefined && !rules.failed(field)) rules.add(field, requiredIfTest(field));
  if (input.ab_winner_metric === 'clicks' && input.track_clicks === 0 && !rules.failed('ab_winner_metric'))
    rules.add('ab_winner_metric', messages.invalid('ab_winner_metric'));
  // A failure inside the variants drops them all (a deferred route never sees failed values).
  const failed = Object.keys(rules.errors).some((field) => field === 'variants' || field.startsWith('variants.'));
  const given = input.variants ?? [];
  if (given.length === 0 && !failed) rules.add('variants', requiredIfTest('variants'));
  const variants: VariantValues[] = [];
  for (const [i, v] of given.entries()) {
    const prefix = `variants.${i + 1}.`;
    const design = await checkVariantDesign(deps, userId, v, prefix, rules);
    variants.push({ variant: i + 1, subject: v.subject, ...design });
  }
  return {
    columns: {
      ab_test: 1,
      ab_test_percent: input.ab_test_percent ?? null,
      ab_winner_metric: input.ab_winner_metric ?? null,
      ab_wait_minutes: input.ab_wait_minutes ?? null,
    },
    variants,
  };
}
