/**
 * The composer's one form store: the send being composed (its fields, the lists they choose
 * from, the A/B test), the notes of the last change (error, status, field errors), the contact
 * whose data fills the preview and the tests, and what every step does with the service (load,
 * save as a draft, preview). Each step of the composer is a component over this store
 * (`AudienceStep`, `ContentStep`, `AbTestStep`, `ScheduleStep`, `PreviewStep`, `TestStep`,
 * `ReviewStep`); `Composer.svelte` lays them out.
 */
import { tick } from 'svelte';
import { api, ApiError, messageOf, type Form } from '../../lib/api';
import type { DesignChoice } from '../../lib/designs';
import { apiName, fieldProblems, focusFirstInvalid } from '../../lib/form-errors';
import type { ContactType, Segment, Sender, UnsubscribeGroup } from '../../lib/types';
import { AbDraft } from './ab-test.svelte';
import { browserZone, utcText, zonedToUtc } from './time';
import { isEditable, type FillContact, type Preview, type SingleSend } from './types';

/** Every IANA zone the browser knows, UTC first when it lacks it. */
export const ZONES = (() => {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return all.includes('UTC') ? all : ['UTC', ...all];
})();

export class SendDraft {
  /** The send as saved (null for a new one, until it is). */
  send = $state<SingleSend | null>(null);
  types = $state<ContactType[]>([]);
  segments = $state<Segment[]>([]);
  senders = $state<Sender[]>([]);
  groups = $state<UnsubscribeGroup[]>([]);
  loaded = $state(false);

  /** The notes of the last change: its refusal, what it did, and the refusal's field errors (the API's field names). */
  error = $state('');
  status = $state('');
  fieldErrors = $state<Record<string, string[]>>({});
  /** A change with the service is under way (the buttons that start one wait). */
  busy = $state(false);

  name = $state('');
  senderId = $state('');
  recipients = $state<string[]>([]);
  excludes = $state<string[]>([]);
  /** The design picker's key to start with: the shipped template the send was saved with. */
  initialDesign = $state('');
  subject = $state('');
  preheader = $state('');
  groupId = $state('');
  when = $state<'now' | 'schedule'>('now');
  date = $state('');
  time = $state('');
  zone = $state(browserZone());
  /** The A/B test step. */
  readonly ab = new AbDraft();

  /** The saved send as `fill` would get it; `fill` is null until the first preview names the default (the first recipient). */
  preview = $state<Preview | null>(null);
  previewError = $state('');
  fill = $state<FillContact | null>(null);

  /** The form on screen, where a refusal moves the focus to the first field in error. */
  form = $state<HTMLFormElement>();

  #design = $state<DesignChoice>();
  /** The picker's first choice: while it is still chosen, a send with its own design (saved JSON or HTML) keeps it. */
  #firstKey = $state<string | null>(null);

  /** `utr`: the send to edit, or null for a new one; `saved`: the page opens on a draft just saved. */
  constructor(
    readonly utr: string | null,
    saved = false,
  ) {
    if (saved) this.status = 'Draft saved.';
  }

  get design(): DesignChoice | undefined {
    return this.#design;
  }
  set design(choice: DesignChoice | undefined) {
    if (this.#firstKey === null && choice) this.#firstKey = choice.key;
    this.#design = choice;
  }

  /** Whether the saved send has a design of its own (JSON or HTML), which the picker cannot show. */
  readonly ownDesign = $derived(!!this.send && !!(this.send.template_json || this.send.template_html));
  /** Whether it keeps that design: while the picker's first choice stands. */
  readonly keepOwn = $derived(this.ownDesign && (this.#firstKey === null || this.#design?.key === this.#firstKey));
  /** The send's design as the A/B step and the review name it. */
  readonly designLabel = $derived(this.keepOwn ? '' : (this.#design?.label ?? ''));

  /** Every contact type and segment, as the recipients and exclusions offer them. */
  readonly options = $derived([
    ...this.types.map((t) => ({ key: `contacts_${t.id}`, label: `All contacts of ${t.name}` })),
    ...this.segments.map((s) => ({ key: `segments_${s.id}`, label: `Segment ${s.segment_name}` })),
  ]);

  /** The UTC moment the schedule means, as text, or '' while the date or time is incomplete. */
  readonly utcMoment = $derived.by(() => {
    if (this.when !== 'schedule' || !/^\d{4}-\d{2}-\d{2}$/.test(this.date) || !/^\d{2}:\d{2}/.test(this.time)) return '';
    try {
      return utcText(zonedToUtc(this.date, this.time.slice(0, 5), this.zone));
    } catch {
      return '';
    }
  });

  /** Reads the lists the form chooses from and, when editing, the send (then its preview). */
  async load(): Promise<void> {
    try {
      const [t, s, snd, g, details] = await Promise.all([
        api.get('/contacts-type'),
        api.get('/segment/list'),
        api.get('/senders'),
        api.get('/unsubscribes-groups'),
        this.utr ? api.get('/single-send/details', { utr: this.utr }) : null,
      ]);
      this.types = t.contactTypes;
      this.segments = s.segments;
      this.senders = snd.senders;
      this.groups = g.unsubscribesGroups;
      if (details) {
        this.fillFrom(details.singleSend[0]);
        if (isEditable(details.singleSend[0])) void this.loadPreview();
      } else {
        this.senderId = String(this.senders.find((x) => x.is_verified === 1)?.id ?? '');
        this.groupId = String(this.groups[0]?.id ?? '');
      }
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.loaded = true;
    }
  }

  /** The form as the saved send has it. */
  fillFrom(s: SingleSend): void {
    this.send = s;
    this.name = s.single_send_name;
    this.senderId = String(s.sender_id);
    this.recipients = s.recipient_id.map((r) => `${r.table}_${r.id}`);
    this.excludes = s.exclude_specific_recipient_id.map((r) => `${r.table}_${r.id}`);
    this.initialDesign = s.template_json ? '' : `t${s.template_id}`;
    this.subject = s.subject;
    this.preheader = s.preheader;
    this.groupId = String(s.unsubscribe_group_id);
    this.when = s.schedule_type === 1 ? 'schedule' : 'now';
    if (s.schedule_type === 1) {
      this.date = s.schedule_date;
      this.time = s.schedule_time.slice(0, 5);
      this.zone = s.timezone ?? 'UTC';
    }
    this.ab.fill(s);
  }

  /** The create/update form of what is on screen. */
  body(draft: 0 | 1): Form<'/single/send/create'> {
    const scheduled = this.when === 'schedule';
    const send = this.send;
    const design = this.#design;
    return {
      single_send_name: this.name,
      sender_id: this.senderId,
      recipient_id: this.recipients,
      exclude_specific_recipient_id: this.excludes,
      ...(this.keepOwn && send
        ? { template_id: send.template_id, template_json: send.template_json || undefined, template_html: send.template_html || undefined }
        : { template_id: design?.template_id, template_json: design?.template_json || undefined }),
      subject: this.subject,
      preheader: this.preheader,
      unsubscribe_group_id: this.groupId,
      schedule_type: scheduled ? 1 : 0,
      schedule_date: scheduled ? this.date : undefined,
      schedule_time: scheduled ? this.time : undefined,
      timezone: scheduled ? this.zone : undefined,
      ...this.ab.fields(),
      draft,
    };
  }

  /** The form's fields in its order. The send's own keep the API's words; the A/B test's are worded with their labels. */
  labels(): Array<[string, string]> {
    const own = (fields: string[]) => fields.map((f): [string, string] => [f, apiName(f)]);
    return [
      ...own(['single_send_name', 'sender_id', 'recipient_id', 'exclude_specific_recipient_id', 'template_id', 'template_json']),
      ...own(['template_html', 'subject', 'preheader', 'unsubscribe_group_id']),
      ...this.ab.labels(),
      ...own(['schedule_type', 'schedule_date', 'schedule_time', 'timezone']),
    ];
  }

  /** Clears the last change's notes (a change starts). */
  reset(): void {
    this.error = '';
    this.status = '';
    this.fieldErrors = {};
  }

  /** A refusal: its text, and its field errors next to their fields (in the form's order), the focus on the first. */
  async failed(e: unknown): Promise<void> {
    this.error = messageOf(e);
    if (!(e instanceof ApiError)) return;
    const problems = fieldProblems(e.fields, this.labels());
    this.fieldErrors = Object.fromEntries(problems.map((p) => [p.field, p.messages]));
    if (problems.length) this.error = problems.flatMap((p) => p.messages).join(' ');
    await tick();
    focusFirstInvalid(this.form);
  }

  /** Saves what is on screen as a draft; returns the send's utr, or null when it failed. */
  async saveDraft(): Promise<string | null> {
    try {
      if (this.utr) {
        await api.post('/single/send/update', { ...this.body(1), utr: this.utr });
        return this.utr;
      }
      const r = await api.post('/single/send/create', this.body(1));
      return r.message.utr;
    } catch (e) {
      void this.failed(e);
      return null;
    }
  }

  /** Reads the send as saved again (after a save), and its preview. */
  async reload(): Promise<void> {
    const d = await api.get('/single-send/details', { utr: this.utr! });
    this.send = d.singleSend[0];
    await this.loadPreview();
  }

  /**
   * The saved send as the chosen contact would get it; without a choice yet, as its first
   * recipient, whom the answer names (the choice from then on, for the tests too).
   */
  async loadPreview(): Promise<void> {
    try {
      this.preview = (await api.get('/single-send/preview', { utr: this.utr!, contact_id: this.fill?.id })).preview;
      this.fill = this.preview.contact;
      this.previewError = '';
    } catch (e) {
      this.previewError = messageOf(e);
    }
  }
}
