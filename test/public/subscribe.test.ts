import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, make } from '../helpers.js';
import { group, setupSends, TS, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { consentsOf } from '../../src/modules/contacts/contacts.privacy.queries.js';
import { isoMicros } from '../../src/util/time.js';

const LINK = /https:\/\/mail\.example\.test(\/subscribe\/confirm\/[A-Za-z0-9_.-]+)/;
const HOUR = 60 * 60 * 1000;
let seq = 0;
const address = (tag = 'p') => `${tag}.${process.pid}.${++seq}@example.org`;

describe('sign-up forms (public): post, mail, confirm', () => {
  let t: SendsContext;
  let userId: number;
  let type: number;
  let sender: number;
  let news: number;
  let formId: number;
  let ip = 0;
  /** A fresh client IP per test, so the per-IP limit only bites where a test wants it. */
  let currentIp = '';

  const createForm = async (extra: Record<string, unknown> = {}) => {
    const r = await t.a.post('/forms/create', {
      name: 'News',
      contact_type_id: type,
      sender_id: sender,
      fields: ['first_name', 'country', 'shoe_size'],
      unsubscribe_group_id: news,
      ...extra,
    });
    assert.equal(r.status, 200, r.text);
    return r.body.id as number;
  };
  const post = (id: number, form: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.anon.request('POST', `/subscribe/${id}`, {
      form,
      headers: { 'x-forwarded-for': currentIp, 'user-agent': 'Test Browser/1.0', ...headers },
    });
  const postJson = (id: number, json: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.anon.request('POST', `/subscribe/${id}`, { json, headers: { 'x-forwarded-for': currentIp, ...headers } });
  const confirm = (path: string, ipAddress = '198.51.100.9') =>
    t.anon.request('POST', path, { form: {}, headers: { 'x-forwarded-for': ipAddress, 'user-agent': 'Confirming Browser' } });
  const pending = () => t.database.db.selectFrom('signup_pending').selectAll().execute();
  const contactsOf = (email: string) =>
    t.database.db.selectFrom('contacts').selectAll().where('email_key', '=', email.toLowerCase()).where('deleted_at', 'is', null).execute();
  /** Delivers the queued mail and returns the confirmation link paths mailed to `email`. */
  const linksTo = async (email: string) => {
    await drainQueue(t);
    return t.sink!.to(email).map((m) => LINK.exec(m.text ?? '')![1]);
  };

  before(async () => {
    // A proxy on loopback (app.inject's address) names each test's client in X-Forwarded-For.
    t = await setupSends({ sink: true, env: { TRUST_PROXY: '127.0.0.1' } });
    userId = t.a.keys!.user_id;
    type = await make.contactType(t.a);
    sender = await verifiedSender(t, t.a, { from_name: 'Acme News', from_email: 'news@acme.example' });
    news = await group(t.a);
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'shoe_size', field_type: 'number' })).status, 200);
    formId = await createForm();
  });
  beforeEach(() => {
    currentIp = `203.0.113.${++ip}`;
  });
  after(() => t.close());

  it('runs the whole flow: post, mail, a page that does not confirm, the button that does', async () => {
    const now = isoMicros(t.clock.now());
    await t.database.db
      .insertInto('webhook_endpoints')
      .values({ user_id: userId, url: 'https://hooks.example.com/x', events: '["*"]', secret: 'whsec_x', created_at: now, updated_at: now })
      .execute();
    const segment = await t.a.post('/segment/create', {
      segment_name: 'Named',
      contact_type_id: type,
      select_field: ['first_name'],
      select_operator: ['is not empty'],
    });
    assert.equal(segment.status, 200, segment.text);
    const email = address('Flow');
    assert.equal((await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: news, email_address: email })).status, 200);

    const r = await post(formId, { email, first_name: '<script>alert(1)</script>', country: 'IN', custom_field: { shoe_size: '42' } });
    assert.equal(r.status, 200, r.text);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(r.text, /Check your inbox/);
    const [row] = await pending();
    assert.equal(row.email, email);
    assert.equal(row.ip, currentIp);
    assert.equal(row.user_agent, 'Test Browser/1.0');
    assert.deepEqual(JSON.parse(row.field_values), { first_name: '<script>alert(1)</script>', country: '101', shoe_size: '42' });

    const [path] = await linksTo(email);
    const mail = t.sink!.to(email)[0];
    assert.equal(mail.subject, 'Please confirm your subscription');
    assert.match(mail.header('from')!, /Acme News <news@acme\.example>/);
    assert.ok(row.token_hash.length === 64 && !path.includes(row.token_hash));
    assert.ok(!row.mail_text.includes(path.split('/').pop()!), 'the stored text does not hold the token');
    assert.equal(
      row.mail_text,
      mail.text!.replace(/\r\n/g, '\n').trim().replace(LINK, 'https://mail.example.test/subscribe/confirm/<token>'),
    );

    const page = await t.anon.get(path);
    assert.equal(page.status, 200);
    assert.match(page.text, /<form method="post"><p><button type="submit">Confirm subscription<\/button>/);
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.deepEqual(await contactsOf(email), [], 'opening the link confirms nothing');
    assert.equal((await t.anon.request('HEAD', path)).status, 200);
    assert.deepEqual(await contactsOf(email), []);

    t.clock.advance(5 * 60 * 1000);
    const done = await confirm(path);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Subscription confirmed/);
    assert.match(done.text, new RegExp(email.replace(/\./g, '\\.')));
    const [contact] = await contactsOf(email);
    assert.equal(contact.contact_type_id, type);
    assert.equal(contact.first_name, '<script>alert(1)</script>');
    assert.equal(contact.country, '101');
    assert.deepEqual(JSON.parse(contact.custom_field!), { shoe_size: '42' });
    const details = await t.a.get('/contacts/details', { contact_id: contact.id });
    assert.deepEqual(details.body.message.contact.custom_field, { shoe_size: { field_name: 'Shoe Size', field_value: '42' } });

    const members = await t.a.get('/segment/email/list', { segment_id: segment.body.id });
    assert.ok(
      members.body.message.contactEmails.some((m: { contact_id: number }) => m.contact_id === contact.id),
      'the segment sees the contact',
    );
    const group = await t.a.get('/unsubscribes-groups/recipients-list', { groupId: news });
    assert.deepEqual(group.body.message.recipients, [], 'confirming takes the address off the form group');

    const [consent] = await consentsOf(t.database.db, userId, email.toLowerCase());
    assert.equal(consent.contact_id, contact.id);
    assert.equal(consent.form_id, formId);
    assert.equal(consent.form_name, 'News');
    assert.equal(consent.signed_up_at, row.created_at);
    assert.equal(consent.signup_ip, row.ip);
    assert.equal(consent.signup_user_agent, 'Test Browser/1.0');
    assert.equal(consent.confirm_ip, '198.51.100.9');
    assert.equal(consent.confirm_user_agent, 'Confirming Browser');
    assert.equal(consent.confirmed_at, isoMicros(t.clock.now()));
    assert.match(consent.confirmed_at, TS);
    assert.equal(consent.mail_subject, 'Please confirm your subscription');
    assert.equal(consent.mail_text, row.mail_text);

    const events = await t.database.db.selectFrom('webhook_events').selectAll().where('type', '=', 'contact.subscribed').execute();
    assert.equal(events.length, 1);
    assert.deepEqual(JSON.parse(events[0].body).data, { email, contact_id: contact.id, form_id: formId });
    assert.equal(events[0].email_key, email.toLowerCase());
    assert.deepEqual(await pending(), []);

    const again = await confirm(path);
    assert.equal(again.status, 410);
    assert.match(again.text, /expired or was already used/);
    assert.equal((await t.anon.get(path)).status, 410);
    assert.equal((await consentsOf(t.database.db, userId, email.toLowerCase())).length, 1);
  });

  it('updates the contact that already has the address, merging custom values', async () => {
    const email = address('known');
    const id = await make.contact(t.a, { contact_type_id: type, email, first_name: 'Old', custom_field: { shoe_size: '40' } });
    await post(formId, { email: email.toUpperCase(), first_name: 'New' });
    const [path] = await linksTo(email);
    assert.equal((await confirm(path)).status, 200);
    const [contact] = await contactsOf(email);
    assert.equal(contact.id, id);
    assert.equal(contact.first_name, 'New');
    assert.equal(contact.last_name, 'Lovelace');
    assert.deepEqual(JSON.parse(contact.custom_field!), { shoe_size: '40' });
  });

  it("redirects to the form's page after confirming", async () => {
    const id = await createForm({ redirect_url: 'https://example.com/welcome?x=1' });
    const email = address('redirect');
    await post(id, { email });
    const [path] = await linksTo(email);
    const r = await confirm(path);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, 'https://example.com/welcome?x=1');
    assert.equal((await contactsOf(email)).length, 1);
  });

  it('answers JSON to a JSON request or one that accepts only JSON', async () => {
    const email = address('json');
    const r = await postJson(formId, { email, first_name: 'Jo' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Check your inbox to confirm your subscription.' });
    assert.equal(r.headers['access-control-allow-origin'], '*');
    const form = await post(formId, { email: address('json') }, { accept: 'application/json' });
    assert.deepEqual(form.body, { status: 'success', message: 'Check your inbox to confirm your subscription.' });

    const bad = await postJson(formId, {
      email: 'not an address',
      first_name: 'x'.repeat(300),
      country: 'Atlantis',
      custom_field: { shoe_size: 'big' },
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, {
      status: 'failed',
      errors: {
        first_name: ['The first name must not be greater than 255 characters.'],
        email: ['The email must be a valid email address.'],
        country: ['The selected country is invalid.'],
        'custom_field.shoe_size': ['The shoe size must be a number.'],
      },
    });
    assert.deepEqual((await postJson(formId, {})).body, { status: 'failed', errors: { email: ['The email field is required.'] } });
    const missing = await postJson(987654, { email: address() });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { status: 'failed', errors: 'Record not found' });
    assert.equal((await postJson('abc' as unknown as number, { email: address() })).status, 404);
  });

  it('answers pages to a browser: errors escaped, unknown form 404', async () => {
    const bad = await post(formId, { email: '<script>alert(1)</script>' });
    assert.equal(bad.status, 422);
    assert.match(String(bad.headers['content-type']), /^text\/html/);
    assert.match(bad.text, /The email must be a valid email address\./);
    assert.doesNotMatch(bad.text, /<script>/);
    const missing = await post(987654, { email: address() });
    assert.equal(missing.status, 404);
    assert.match(missing.text, /Form not found/);
  });

  it('takes a filled honeypot as a success and stores and mails nothing', async () => {
    const before = (await pending()).length;
    const email = address('bot');
    const r = await post(formId, { email, website: 'http://spam.example' });
    assert.equal(r.status, 200);
    assert.match(r.text, /Check your inbox/);
    assert.equal((await pending()).length, before);
    assert.deepEqual(await linksTo(email), []);
  });

  it('mails no address that is unsubscribed from everything or suppressed, and says nothing of it', async () => {
    const unsubscribed = address('gone');
    const bounced = address('bounced');
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: unsubscribed })).status, 200);
    await t.database.db
      .insertInto('suppressions')
      .values({
        user_id: userId,
        email: bounced,
        email_key: bounced.toLowerCase(),
        reason: 'hard_bounce',
        detail: null,
        created_at: isoMicros(new Date()),
      })
      .execute();
    for (const email of [unsubscribed, bounced.toUpperCase()]) {
      const r = await postJson(formId, { email });
      assert.deepEqual(r.body, { status: 'success', message: 'Check your inbox to confirm your subscription.' });
    }
    assert.deepEqual(await linksTo(unsubscribed), []);
    assert.deepEqual(await linksTo(bounced), []);
    assert.equal((await pending()).filter((p) => [unsubscribed, bounced].includes(p.email_key)).length, 0);
  });

  it('refuses to confirm an address unsubscribed from everything since it signed up', async () => {
    const email = address('later');
    await post(formId, { email });
    const [path] = await linksTo(email);
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: email })).status, 200);
    const r = await confirm(path);
    assert.equal(r.status, 409);
    assert.match(r.text, /Nothing changed/);
    assert.deepEqual(await contactsOf(email), []);
    assert.equal(
      (await t.a.get('/global-unsubscribes')).body.message.unSubscribers.filter((u: any) => u.email_address === email).length,
      1,
    );
  });

  it('mails the same address for the same form once within an hour', async () => {
    const email = address('twice');
    await post(formId, { email });
    await post(formId, { email }, { 'x-forwarded-for': '192.0.2.77' });
    assert.equal((await linksTo(email)).length, 1);
    t.clock.advance(HOUR + 1000);
    await post(formId, { email });
    const links = await linksTo(email);
    assert.equal(links.length, 2);
    // Both links work until one is used; confirming removes the address's other pending sign-ups.
    assert.equal((await confirm(links[1])).status, 200);
    assert.equal((await confirm(links[0])).status, 410);
  });

  it('limits sign-ups per IP and form within an hour, and per address', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await post(formId, { email: address('ip') })).status, 200);
    const page = await post(formId, { email: address('ip') });
    assert.equal(page.status, 429);
    assert.equal(page.headers['retry-after'], '3600');
    assert.match(page.text, /Too many sign-ups to this form from your network\. Try again in 60 minutes\./);
    const json = await postJson(formId, { email: address('ip') });
    assert.equal(json.status, 429);
    assert.deepEqual(json.body, {
      status: 'failed',
      errors: 'Too many sign-ups to this form from your network. Try again in 60 minutes.',
    });
    const other = await createForm();
    assert.equal((await post(other, { email: address('ip') })).status, 200, 'the limit is per form');
    t.clock.advance(HOUR + 1000);
    assert.equal((await post(formId, { email: address('ip') })).status, 200, 'an hour later the IP may sign up again');

    const email = address('target');
    const forms = [formId];
    for (let i = 0; i < 5; i++) forms.push(await createForm());
    const answers: number[] = [];
    for (const [i, id] of forms.entries()) answers.push((await post(id, { email }, { 'x-forwarded-for': `192.0.2.${100 + i}` })).status);
    assert.deepEqual(answers, [200, 200, 200, 200, 200, 429]);
    assert.equal((await linksTo(email)).length, 5);
  });

  it('says a link is forged, altered, expired or used, never confirming and never failing', async () => {
    const forged = await t.anon.get('/subscribe/confirm/not-a-token');
    assert.equal(forged.status, 404);
    assert.match(forged.text, /not valid/);
    assert.equal((await confirm('/subscribe/confirm/abc.def')).status, 404);
    assert.equal((await confirm(`/subscribe/confirm/${'x'.repeat(90)}.${'y'.repeat(9)}`)).status, 404);

    const email = address('expiring');
    await post(formId, { email });
    const [path] = await linksTo(email);
    const altered = path.slice(0, -1) + (path.endsWith('A') ? 'B' : 'A');
    assert.equal((await confirm(altered)).status, 404);
    t.clock.advance(7 * 24 * HOUR + 1000);
    assert.equal((await t.anon.get(path)).status, 410);
    const late = await confirm(path);
    assert.equal(late.status, 410);
    assert.match(late.text, /expired/);
    assert.deepEqual(await contactsOf(email), []);

    // Expired sign-ups are cleaned up by the next sign-up.
    const before = (await pending()).length;
    await post(formId, { email: address('cleanup') });
    const after = await pending();
    assert.ok(after.length < before + 1, 'expired rows went');
    assert.ok(after.every((p) => p.expires_at > isoMicros(t.clock.now())));
  });

  it('answers 409 while the form cannot mail (sender no longer verified)', async () => {
    const other = await verifiedSender(t, t.a);
    const id = await createForm({ sender_id: other });
    await t.database.db.updateTable('senders').set({ is_verified: 0 }).where('id', '=', other).execute();
    const r = await post(id, { email: address() });
    assert.equal(r.status, 409);
    assert.match(r.text, /not taking sign-ups/);
    assert.deepEqual((await postJson(id, { email: address() })).body, {
      status: 'failed',
      errors: 'This form is not taking sign-ups at the moment.',
    });
  });

  it('keeps the consents when the form is deleted, and drops them with the contact', async () => {
    const id = await createForm();
    const email = address('kept');
    await post(id, { email });
    const [path] = await linksTo(email);
    assert.equal((await confirm(path)).status, 200);
    assert.equal((await t.a.delete('/forms/delete', { id })).status, 200);
    assert.equal((await consentsOf(t.database.db, userId, email)).length, 1);
    await t.database.db.deleteFrom('contacts').where('email_key', '=', email).execute();
    assert.equal((await consentsOf(t.database.db, userId, email)).length, 0);
  });
});
