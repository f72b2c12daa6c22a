/**
 * The A/B test of a send as the composer edits it: on or off, the variants besides the send's own
 * (variant 0: its subject and design), the share, the metric and the wait; and the fields of
 * create and update it gives (docs/ab-tests.md).
 */
import type { Form } from '../../lib/api';
import type { DesignChoice } from '../../lib/designs';
import { hasOwnDesign, type Metric, type SingleSend, type Variant } from './types';

/** The fields of create and update (update takes the same, with the send's `utr`). */
type SendFields = Form<'/single/send/create'>;

/** A variant's fields in the form. */
type VariantFields = NonNullable<SendFields['variants']>[number];

/** Variants besides the send's own: 1 to 4, so 2 to 5 in all. */
export const MAX_OTHER_VARIANTS = 4;

/** One variant besides the send's own. */
export class VariantDraft {
  subject = $state('');
  /** Whether it has a design of its own (else the send's). */
  own = $state(false);
  /** The design picker's key to start with: the saved design or shipped template it was saved with. */
  readonly initialKey: string;
  /** The design picker's first choice. */
  #firstKey = $state<string | null>(null);
  #design = $state<DesignChoice>();

  /** `saved`: the variant as details show it (its design fields), for a send opened again. */
  constructor(readonly saved: Variant | null = null) {
    this.subject = saved?.subject ?? '';
    this.own = saved !== null && hasOwnDesign(saved);
    this.initialKey =
      !saved || !this.own
        ? ''
        : saved.design_id
          ? `d${saved.design_id}`
          : saved.template_json || saved.template_html
            ? ''
            : `t${saved.template_id}`;
  }

  /** The design picker's choice (bound to it). */
  get design(): DesignChoice | undefined {
    return this.#design;
  }
  set design(choice: DesignChoice | undefined) {
    if (this.#firstKey === null && choice) this.#firstKey = choice.key;
    this.#design = choice;
  }

  /**
   * Whether it keeps the design it was saved with: one the picker cannot show (JSON or HTML given
   * through the API, or a saved design since deleted), while the picker's first choice stands.
   */
  get keeps(): boolean {
    if (!this.own || !this.saved || !hasOwnDesign(this.saved)) return false;
    if (this.initialKey && this.#design?.key === this.initialKey) return false;
    return this.#firstKey === null || this.#design?.key === this.#firstKey;
  }

  /** Its fields as a variant of the form (`variants[i][subject]`, …): the subject, and its design if it has its own. */
  fields(): VariantFields {
    const out: VariantFields = { subject: this.subject };
    if (!this.own) return out;
    if (this.keeps) {
      const s = this.saved!;
      out.template_id = s.template_id ?? undefined;
      out.template_json = s.template_json || undefined;
      out.template_html = s.template_json ? undefined : s.template_html || undefined;
    } else if (this.#design?.key.startsWith('d')) out.design_id = Number(this.#design.key.slice(1));
    else if (this.#design) out.template_id = this.#design.template_id;
    return out;
  }
}

/** The whole test. */
export class AbDraft {
  on = $state(false);
  variants = $state<VariantDraft[]>([]);
  /** The share of the recipients in the test (percent, 10–50). */
  percent = $state<number | null>(20);
  metric = $state<Metric>('opens');
  /** The wait, in `unit`s. */
  wait = $state<number | null>(4);
  unit = $state<'minutes' | 'hours'>('hours');

  /** The test of a saved send (none: the defaults, off). */
  fill(send: SingleSend): void {
    this.on = send.ab_test === 1;
    this.variants = send.variants.filter((v) => v.index > 0).map((v) => new VariantDraft(v));
    this.percent = send.ab_test_percent ?? 20;
    this.metric = send.ab_winner_metric ?? 'opens';
    const minutes = send.ab_wait_minutes;
    if (minutes !== null) {
      this.unit = minutes % 60 === 0 ? 'hours' : 'minutes';
      this.wait = this.unit === 'hours' ? minutes / 60 : minutes;
    }
  }

  /** Turned on, a test has at least one other variant to edit. */
  ensureVariant(): void {
    if (this.on && this.variants.length === 0) this.add();
  }

  add(): void {
    if (this.variants.length < MAX_OTHER_VARIANTS) this.variants.push(new VariantDraft());
  }

  remove(i: number): void {
    if (this.variants.length > 1) this.variants.splice(i, 1);
  }

  /** The wait in minutes, as the API takes it ('' when none is given: the API says it is required). */
  get minutes(): number | '' {
    if (this.wait === null || Number.isNaN(this.wait)) return '';
    // A wait in hours is stored in whole minutes.
    return this.unit === 'hours' ? Math.round(this.wait * 60) : this.wait;
  }

  /** The fields of create and update: off, `ab_test` 0 (an update without a test leaves none). */
  fields(): SendFields {
    if (!this.on) return { ab_test: 0 };
    return {
      ab_test: 1,
      ab_test_percent: this.percent ?? '',
      ab_winner_metric: this.metric,
      ab_wait_minutes: this.minutes,
      // Numbered from 1: variant 0 is the send's own subject and design.
      variants: Object.fromEntries(this.variants.map((v, i) => [i + 1, v.fields()])),
    };
  }

  /** The test's fields with their labels, in the order the composer shows them (field errors are worded with them). */
  labels(): Array<[string, string]> {
    const perVariant = this.variants.flatMap((_, i): Array<[string, string]> => {
      const n = i + 1;
      const design = `Variant ${n} design`;
      return [
        [`variants.${n}.subject`, `Variant ${n} subject`],
        [`variants.${n}.template_id`, design],
        [`variants.${n}.template_json`, design],
        [`variants.${n}.template_html`, design],
        [`variants.${n}.design_id`, design],
      ];
    });
    return [
      ['ab_test', 'A/B test'],
      ['variants', 'Variants'],
      ...perVariant,
      ['ab_test_percent', 'Test share'],
      ['ab_winner_metric', 'Winner metric'],
      ['ab_wait_minutes', 'Wait in minutes'],
    ];
  }
}
