import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, fieldErrors, make } from '../helpers.js';
import { group, Rnf, setupSends, TS, verifiedSender, type SendsContext } from './single-sends.helpers.js';
import { senderForm } from './senders.helpers.js';
import { embedHtml } from '../../src/modules/forms/forms.embed.js';

describe('sign-up forms (keyed)', () => {
  let t: SendsContext;
  let type: number;
  let sender: number;
  let news: number;
  const form = (extra: Record<string, unknown> = {}) => ({
    name: 'Newsletter sign-up',
    contact_type_id: type,
    sender_id: sender,
    fields: ['first_name', 'shoe_size', 'age'],
    ...extra,
  });

  before(async () => {
    t = await setupSends();
    type = await make.contactType(t.a);
    sender = await verifiedSender(t, t.a);
    news = await group(t.a);
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'shoe_size', field_type: 'number' })).status, 200);
  });
  after(() => t.close());

  it('needs the keys on every route', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/forms'],
      ['POST', '/forms/create'],
      ['GET', '/forms/details?id=1'],
      ['POST', '/forms/update'],
      ['DELETE', '/forms/delete?id=1'],
    ]);
  });

  it('creates a form and answers its id and the HTML to embed', async () => {
    const r = await t.a.post('/forms/create', form({ unsubscribe_group_id: news, redirect_url: 'https://example.com/thanks' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'success');
    assert.equal(r.body.message, 'Added Successfully');
    assert.equal(typeof r.body.id, 'number');
    const html: string = r.body.embed_html;
    assert.match(html, new RegExp(`^<form method="post" action="https://mail\\.example\\.test/subscribe/${r.body.id}"`));
    assert.match(html, /<label for="cf\d+-email">Email<\/label><br><input type="email" id="cf\d+-email" name="email" required/);
    assert.match(html, /<label for="cf\d+-first_name">First Name<\/label><br><input type="text" [^>]*name="first_name">/);
    assert.match(html, /<input type="number" [^>]*name="age">/);
    assert.match(html, /name="custom_field\[shoe_size\]"/);
    assert.match(html, /<div aria-hidden="true" style="position:absolute;left:-5000px">.*name="website" tabindex="-1" autocomplete="off"/);

    const d = await t.a.get('/forms/details', { id: r.body.id });
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(Object.keys(d.body), ['status', 'message']);
    const f = d.body.message.form;
    assert.deepEqual(
      { ...f, created_at: 'x', updated_at: 'x' },
      {
        id: r.body.id,
        user_id: f.user_id,
        name: 'Newsletter sign-up',
        contact_type_id: type,
        fields: ['email', 'first_name', 'shoe_size', 'age'],
        unsubscribe_group_id: news,
        sender_id: sender,
        redirect_url: 'https://example.com/thanks',
        confirmation_subject: null,
        confirmation_text: null,
        subscribe_url: `https://mail.example.test/subscribe/${r.body.id}`,
        embed_html: html,
        created_at: 'x',
        updated_at: 'x',
      },
    );
    assert.match(f.created_at, TS);
  });

  it('lists the forms newest first, paged on request', async () => {
    const second = (await t.a.post('/forms/create', form({ name: 'Second' }))).body.id;
    const r = await t.a.get('/forms');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.message.forms[0].id, second);
    assert.ok(r.body.message.forms.length >= 2);
    const page = await t.a.get('/forms', { page: 1, per_page: 1 });
    assert.equal(page.body.message.forms.length, 1);
    assert.equal(page.body.message.meta.total, r.body.message.forms.length);
    assert.deepEqual((await t.b.get('/forms')).body, { status: 'success', message: { forms: [] } });
  });

  it('reports every failing field together', async () => {
    const r = await t.a.post('/forms/create', {});
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        name: ['The name field is required.'],
        contact_type_id: ['The contact type id field is required.'],
        sender_id: ['The sender id field is required.'],
      }),
    );
    const other = await make.contactType(t.b);
    const bad = await t.a.post(
      '/forms/create',
      form({
        contact_type_id: other,
        sender_id: 999999,
        unsubscribe_group_id: await group(t.b, 'Theirs'),
        fields: ['first_name', 'nope', '<script>'],
        redirect_url: 'javascript:alert(1)',
        confirmation_subject: 'Hi\r\nBcc: x@example.com',
      }),
    );
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.body,
      fieldErrors({
        confirmation_subject: ['The confirmation subject format is invalid.'],
        contact_type_id: ['The selected contact type id is invalid.'],
        sender_id: ['The selected sender id is invalid.'],
        unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'],
        redirect_url: ['The redirect url format is invalid.'],
        'fields.1': ['The selected fields.1 is invalid.'],
        'fields.2': ['The selected fields.2 is invalid.'],
      }),
    );
  });

  it('refuses an unverified sender as sends do', async () => {
    const unverified = (await t.a.post('/sender/save', senderForm())).body.id;
    const r = await t.a.post('/forms/create', form({ sender_id: unverified }));
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, fieldErrors({ sender_id: ['The selected sender id is not verified.'] }));
    const theirs = await verifiedSender(t, t.b);
    const other = await t.a.post('/forms/create', form({ sender_id: theirs }));
    assert.deepEqual(other.body, fieldErrors({ sender_id: ['The selected sender id is invalid.'] }));
  });

  it('updates a form with every field again', async () => {
    const id = (await t.a.post('/forms/create', form())).body.id;
    const r = await t.a.post('/forms/update', {
      id,
      ...form({ name: 'Renamed', fields: ['EMAIL', 'Last_Name', 'last_name'], confirmation_subject: 'Confirm, please' }),
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const f = (await t.a.get('/forms/details', { id })).body.message.form;
    assert.equal(f.name, 'Renamed');
    assert.deepEqual(f.fields, ['email', 'last_name']);
    assert.equal(f.confirmation_subject, 'Confirm, please');
    assert.equal(f.redirect_url, null);
    const bad = await t.a.post('/forms/update', { id, ...form({ name: '' }) });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, fieldErrors({ name: ['The name field is required.'] }));
    assert.equal((await t.a.post('/forms/update', { ...form() })).status, 422);
  });

  it("answers Record not found for another account's form or an unknown id", async () => {
    const id = (await t.a.post('/forms/create', form())).body.id;
    assert.deepEqual((await t.b.get('/forms/details', { id })).body, Rnf);
    assert.equal((await t.b.get('/forms/details', { id })).status, 404);
    assert.deepEqual((await t.a.get('/forms/details', { id: 'abc' })).body, Rnf);
    assert.deepEqual((await t.a.get('/forms/details')).body, Rnf);
    const theirs = await t.b.post('/forms/update', {
      id,
      name: 'Taken over',
      contact_type_id: await make.contactType(t.b),
      sender_id: await verifiedSender(t, t.b),
    });
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, Rnf);
    assert.deepEqual((await t.b.delete('/forms/delete', { id })).body, Rnf);
    assert.equal((await t.a.get('/forms/details', { id })).body.message.form.name, 'Newsletter sign-up');
  });

  it('deletes a form', async () => {
    const id = (await t.a.post('/forms/create', form())).body.id;
    const r = await t.a.delete('/forms/delete', { id });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await t.a.get('/forms/details', { id })).body, Rnf);
    assert.equal((await t.a.delete('/forms/delete', { id })).status, 404);
  });

  it('escapes everything in the HTML to embed', () => {
    const html = embedHtml('https://x.test/"><script>alert(1)</script>', 7, ['email', 'first_name']);
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /action="https:\/\/x\.test\/&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;\/subscribe\/7"/);
  });
});
