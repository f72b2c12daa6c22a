/**
 * An account with a few records of every kind, named as a marketer names them ("Autumn news",
 * "Returning customers"): what the console's second-pass browser tests lay out and check.
 */
import assert from 'node:assert/strict';
import { make, type Client, type TestContext } from '../helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { mjmlText } from '../support/designs.js';

/** The records made, for the tests to open their pages. */
export interface Seeded {
  typeId: number;
  contactId: number;
  segmentId: number;
  groupId: number;
  endpointId: number;
  automationUtr: string;
  /** The sends by name: a draft, a scheduled one, one queued to go at once, one sending, one sent. */
  sends: Record<'draft' | 'scheduled' | 'queued' | 'sending' | 'sent', string>;
}

const PEOPLE: Array<[first: string, last: string, email: string]> = [
  ['Margaret', 'Hamilton', 'margaret.hamilton@example.com'],
  ['Grace', 'Hopper', 'grace.hopper@example.org'],
  ['Katherine', 'Johnson', 'katherine.johnson@example.net'],
  ['Dorothy', 'Vaughan', 'dorothy.vaughan@example.com'],
  ['Annie', 'Easley', 'annie.easley@example.com'],
];

const ok = (r: { status: number; text: string }) => assert.equal(r.status, 200, r.text);

/** A saved sender, verified when `verified` (as opening its mailed link does); its id. */
export async function sender(t: TestContext, c: Client, extra: Record<string, unknown>, verified = true): Promise<number> {
  const r = await c.post('/sender/save', senderForm(extra));
  ok(r);
  if (verified) await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', r.body.id).execute();
  return r.body.id;
}

/** Fills account a with records of every kind; `hookUrl` receives the webhook endpoint's events. */
export async function seedAccount(t: TestContext, hookUrl: string): Promise<Seeded> {
  const c = t.a;
  const db = t.database.db;
  const typeId = await make.contactType(c, 'Returning customers');
  await make.contactType(c, 'Newsletter subscribers');
  const ids: number[] = [];
  for (const [first_name, last_name, email] of PEOPLE)
    ids.push(await make.contact(c, { contact_type_id: typeId, first_name, last_name, email }));

  const segment = await c.post('/segment/create', {
    segment_name: 'Engaged customers',
    contact_type_id: typeId,
    query_type: 'and',
    select_field: ['email'],
    select_operator: ['contains'],
    value: ['example'],
  });
  ok(segment);
  ok(
    await c.post('/segment/email/store', {
      segment_id: segment.body.id,
      first_name: 'Mary',
      last_name: 'Jackson',
      email: 'mary.jackson@example.com',
    }),
  );

  ok(await c.post('/designs/create', { name: 'Autumn news', template_json: mjmlText('<p>Autumn news</p>') }));
  ok(await c.post('/designs/create', { name: 'Welcome series, first email', template_json: mjmlText('<p>Welcome</p>') }));

  const senderId = await sender(t, c, {
    nickname: 'newsletter',
    from_name: 'Acme Newsletter',
    reply_to_email: 'replies.newsletter@acme-example.com',
  });
  await sender(t, c, { nickname: 'support desk', from_name: 'Acme Support', reply_to_email: 'support.replies@acme-example.com' }, false);

  const group = await c.post('/unsubscribes-groups/save', {
    group_name: 'Product announcements',
    description: 'News about what we ship, at most once a month',
    is_display: 1,
  });
  ok(group);
  ok(
    await c.post('/unsubscribes-groups/manually-add', {
      unsubscribe_groups_id: group.body.id,
      email_address: 'former.customer@example.com,another.reader@example.org',
    }),
  );
  ok(await c.post('/global-unsubscribes/save', { email_address: 'no.more.mail@example.com' }));
  ok(await c.post('/notification-recipient/save', { email_address: 'marketing.team@acme-example.com', email_owner: 'Marketing team' }));
  await db
    .insertInto('suppressions')
    .values({
      user_id: (await db.selectFrom('contact_types').select('user_id').where('id', '=', typeId).executeTakeFirstOrThrow()).user_id,
      email_key: 'bounced.reader@example.com',
      email: 'bounced.reader@example.com',
      reason: 'hard_bounce',
      detail: '550 5.1.1 The email account that you tried to reach does not exist',
      created_at: '2030-01-10 09:00:00',
    })
    .execute();
  const endpoint = await c.post('/webhooks/endpoints/create', { url: hookUrl, events: ['*'], description: 'Our CRM' });
  ok(endpoint);

  const base = {
    template_id: 1,
    template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
    sender_id: senderId,
    unsubscribe_group_id: group.body.id,
    subject: 'News for ((first_name))',
    preheader: 'What is new',
    recipient_id: [`contacts_${typeId}`],
    schedule_type: 0,
  };
  const create = async (name: string, extra: Record<string, unknown>) => {
    const r = await c.post('/single/send/create', { ...base, single_send_name: name, ...extra });
    ok(r);
    return r.body.message.utr as string;
  };
  const sends = {
    draft: await create('Autumn news', { draft: 1 }),
    scheduled: await create('Spring sale for returning customers', {
      schedule_type: 1,
      schedule_date: '2031-07-01',
      schedule_time: '09:30',
      timezone: 'Europe/Berlin',
    }),
    queued: await create('Weekly digest', {}),
    sending: await create('Black Friday preview', {}),
    sent: await create('Summer recap', {}),
  };
  await db.updateTable('single_sends').set({ status: 2 }).where('utr', '=', sends.sending).execute();
  await db
    .updateTable('single_sends')
    .set({ status: 3, delivered: 1234, unique_opens: 567, unique_clicks: 89, bounces: 12 })
    .where('utr', '=', sends.sent)
    .execute();

  const automation = await c.post('/automations/create', {
    type: 'welcome',
    automation_for: `contacts_${typeId}`,
    automation_name: 'Welcome series for new customers',
    unsubscribe_group_id: group.body.id,
  });
  ok(automation);
  const automationUtr = automation.body.message.utr as string;
  ok(
    await c.post('/automations/schedule/create', {
      utr: automationUtr,
      sender_id: senderId,
      subject: 'Welcome aboard, ((first_name))',
      waiting_period: 2,
      waiting_type: 'days',
      template_id: 1,
      preview_img: 'blank.png',
      template_html: '<html><body><p>Welcome</p></body></html>',
    }),
  );

  return {
    typeId,
    contactId: ids[0],
    segmentId: segment.body.id,
    groupId: group.body.id,
    endpointId: endpoint.body.message.id,
    automationUtr,
    sends,
  };
}
