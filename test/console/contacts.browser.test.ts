/**
 * The console's Contacts section in a real browser (see browser.ts for the harness): a CSV of
 * 1,000 rows dropped on the import page's drop zone, a CSV with bad rows, custom fields, and a
 * contact's page with its segments, messages, unsubscribes, custom values, export and erasure.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { drainQueue, make, type TestContext } from '../helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { dropFile, skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

const XSS = '<img src=x onerror="window.__xss=1;alert(1)">';

describe('the console: contacts', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let base: string;

  before(async () => {
    h = await startConsole();
    t = h.t;
    base = h.base;
  });
  after(async () => {
    await h?.close();
  });

  it('imports a CSV of 1,000 rows dropped on the drop zone, with upload progress and the row report', async () => {
    const type = await make.contactType(t.a, 'Imported');
    await make.contactType(t.b, 'Only in B');
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await page.getByRole('link', { name: 'Import contacts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Import contacts' }).waitFor();
    const select = page.getByLabel('Contact type');
    await select.locator('option', { hasText: 'Imported' }).waitFor({ state: 'attached' });
    assert.deepEqual(
      await select.locator('option').allTextContents(),
      ['Choose a contact type', 'Imported'],
      "nothing chosen for the reader; another account's types are not offered",
    );
    await select.selectOption({ label: 'Imported' });
    assert.equal(await page.getByLabel('CSV file').getAttribute('accept'), '.csv');
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'contacts-import');

    const lines = ['first_name,last_name,email,country'];
    for (let i = 1; i <= 1000; i++) lines.push(`Person,Number ${i},person${i}@example.com,IN`);
    await dropFile(page, '[aria-label="Drop zone"]', 'people.csv', lines.join('\n') + '\n');
    await page.getByText('Chosen: people.csv').waitFor();
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'Imported: 1000 created, 0 updated, 0 skipped.' }).waitFor();
    assert.equal(await page.getByLabel('Upload progress').evaluate((p) => (p as HTMLProgressElement).value), 1);
    assert.equal(await page.getByRole('table').count(), 0, 'no error table when no row failed');

    const listed = await t.a.get('/contacts/list', { page: 1, per_page: 1 });
    assert.equal(listed.body.message.meta.total, 1000);
    const types = await t.a.get('/contacts-type');
    assert.equal(types.body.message.contactTypes.find((c: { id: number }) => c.id === type).contacts_count, 1000);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'contacts-import-report');

    // The same file again: every row updates its contact.
    await dropFile(page, '[aria-label="Drop zone"]', 'people.csv', lines.join('\n') + '\n');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'Imported: 0 created, 1000 updated, 0 skipped.' }).waitFor();
    assert.equal((await t.a.get('/contacts/list', { page: 1, per_page: 1 })).body.message.meta.total, 1000);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('reports bad rows and columns in the report, as text; a file of another type is refused on its field', async () => {
    await make.contactType(t.a, 'Checked');
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.goto(`${base}/app/contacts/import`);
    await page.getByLabel('Contact type').selectOption({ label: 'Checked' });
    const csv = [
      'email,first_name,country,"' + XSS.replaceAll('"', '""') + '"',
      'good@example.com,Good,India,x',
      'not-an-address,Bad,India,y',
      ',Empty,101,z',
    ].join('\r\n');
    // Chosen with the file input this time.
    await page.getByLabel('CSV file').setInputFiles({ name: 'mixed.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'Imported: 1 created, 0 updated, 2 skipped.' }).waitFor();
    const rows = page.getByRole('table').getByRole('row');
    assert.deepEqual(await rows.allInnerTexts(), [
      'Row\tField\tError',
      `1\t${XSS}\tThe column ${XSS} is not a field; its values were ignored.`,
      '3\temail\tThe email must be a valid email address.',
      '4\temail\tThe email field is required.',
    ]);
    assert.equal(await page.locator('main img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'contacts-import-errors');

    await page.getByLabel('CSV file').setInputFiles({ name: 'people.txt', mimeType: 'text/plain', buffer: Buffer.from('email\n') });
    await page.getByRole('button', { name: 'Import' }).click();
    assert.equal(await page.getByRole('alert').textContent(), 'The CSV file must be a file of type: csv.');
    assert.equal(await page.getByLabel('CSV file').getAttribute('aria-invalid'), 'true');
    // The one console error expected: the 422 of the refused file.
    assert.deepEqual(
      problems.filter((p) => !p.includes('422')),
      [],
    );
    await context.close();
  });

  it('downloads the sample CSV with the keys', async () => {
    const { context, page, problems } = await h.open({ acceptDownloads: true });
    await h.signIn(page);
    await page.goto(`${base}/app/contacts/import`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the sample CSV' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'contacts-sample.csv');
    const text = readFileSync((await download.path())!, 'utf8');
    assert.match(text.split(/\r?\n/)[0], /first_name,last_name,email/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('lists the reserved and custom fields, adds one, refuses a bad name, and deletes one after a confirmation', async () => {
    await t.b.post('/custom-fields/save', { field_name: 'b_secret', field_type: 'text' });
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('link', { name: 'Custom fields' }).click();
    await page.getByRole('heading', { level: 1, name: 'Custom fields' }).waitFor();
    const reserved = page.getByRole('table', { name: 'Reserved fields, on every contact' });
    await reserved.getByRole('cell', { name: 'father_name' }).waitFor();
    await page.getByRole('cell', { name: 'No custom fields yet.' }).waitFor();

    await page.getByLabel('Field name').fill('loyalty_tier');
    await page.getByLabel('Field type').selectOption({ label: 'Number' });
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByRole('status').filter({ hasText: 'Field “loyalty_tier” added.' }).waitFor();
    const custom = page.getByRole('table', { name: 'Custom fields' });
    assert.equal(await custom.getByRole('row').count(), 2);
    assert.deepEqual(await custom.getByRole('row').nth(1).getByRole('cell').allInnerTexts(), [
      'loyalty_tier',
      'Number',
      'Delete\nloyalty_tier',
    ]);
    const fields = (await t.a.get('/custom-fields')).body.message.customFields;
    assert.deepEqual(
      fields.map((f: { field_name: string; field_type: string }) => [f.field_name, f.field_type]),
      [['loyalty_tier', 'number']],
    );
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'contacts-fields');

    await page.getByLabel('Field name').fill('first_name');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('Field name').getAttribute('aria-invalid'), 'true');

    await page.getByRole('button', { name: 'Delete loyalty_tier' }).click();
    await page.getByRole('button', { name: 'Delete the field loyalty_tier' }).click();
    await page.getByRole('status').filter({ hasText: 'Field “loyalty_tier” deleted.' }).waitFor();
    await page.getByRole('cell', { name: 'No custom fields yet.' }).waitFor();
    assert.deepEqual((await t.a.get('/custom-fields')).body.message.customFields, []);
    assert.equal((await t.b.get('/custom-fields')).body.message.customFields.length, 1);
    assert.deepEqual(
      problems.filter((p) => !p.includes('422')),
      [],
    );
    await context.close();
  });

  it("shows a contact's segments, messages and unsubscribes, edits its custom values, exports its data and erases it", async () => {
    const address = 'mira@example.com';
    const type = await make.contactType(t.a, 'Readers');
    assert.equal((await t.a.post('/custom-fields/save', { field_name: 'plan', field_type: 'text' })).status, 200);
    const id = await make.contact(t.a, { contact_type_id: type, email: address, first_name: 'Mira', last_name: 'Stone' });
    await make.contact(t.b, { email: address, first_name: 'Mira in B' });
    const segment = await t.a.post('/segment/create', {
      segment_name: `Readers ${XSS}`,
      contact_type_id: type,
      select_field: ['email'],
      select_operator: ['starts with'],
      value: ['mira'],
    });
    assert.equal(segment.status, 200, segment.text);
    // A single send to the type, delivered through the queue.
    const sender = await t.a.post('/sender/save', senderForm());
    assert.equal(sender.status, 200, sender.text);
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', sender.body.id).execute();
    const group = await t.a.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'News', is_display: 1 });
    const send = await t.a.post('/single/send/create', {
      template_id: 1,
      template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
      sender_id: sender.body.id,
      unsubscribe_group_id: group.body.id,
      single_send_name: 'Spring news',
      subject: 'Spring news',
      preheader: 'What is new',
      recipient_id: [`contacts_${type}`],
      schedule_type: 0,
    });
    assert.equal(send.status, 200, send.text);
    await drainQueue(t);

    const { context, page, problems } = await h.open({ acceptDownloads: true });
    await h.signIn(page);
    await page.goto(`${base}/app/contacts/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Mira Stone' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Segments' }).waitFor();
    await page.getByRole('link', { name: `Readers ${XSS}` }).waitFor();
    const messages = page.getByRole('table', { name: `Campaign mail to ${address}, oldest first` });
    const row = messages.getByRole('row').nth(1);
    assert.match(await row.innerText(), /^Single send\tSpring news\tDelivered\t\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\t0\t0$/);
    await page.getByText('Not on the global unsubscribe list.').waitFor();
    assert.equal(await page.locator('main img').count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'contacts-contact-data');

    // Custom values: shown, edited and saved.
    await page.getByLabel('plan').fill('gold');
    await page.getByLabel('Company name').fill('Stone & Co');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const details = (await t.a.get('/contacts/details', { contact_id: id })).body.message.contact;
    assert.equal(details.custom_field.plan.field_value, 'gold');
    assert.equal(details.custom_field.company_name.field_value, 'Stone & Co');
    assert.equal(await page.getByLabel('plan').inputValue(), 'gold');

    // Export: the JSON of GET /contacts/export, as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export data' }).click()]);
    assert.equal(download.suggestedFilename(), 'contact-mira@example.com.json');
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    assert.deepEqual(exported, (await t.a.get('/contacts/export', { email: address })).body.message);
    assert.equal(exported.messages.length, 1);
    assert.equal(exported.contacts[0].email, address);

    // Erase, after an inline confirmation.
    await page.getByRole('button', { name: 'Erase this address' }).click();
    await page.getByText('keeps the address from ever being mailed again').waitFor();
    await page.getByRole('button', { name: 'Keep the address' }).click();
    await page.getByRole('button', { name: 'Erase this address' }).click();
    await h.shot(page, 'contacts-contact-erase');
    await page.getByRole('button', { name: 'Erase for good' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    const after = await t.a.get('/contacts/export', { email: address });
    assert.equal(after.status, 404);
    assert.equal((await t.a.get('/contacts/details', { contact_id: id })).status, 404);
    assert.equal((await t.b.get('/contacts/export', { email: address })).status, 200, "another account's copy stays");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('fits a phone-sized screen: the import, fields and contact pages do not scroll sideways', async () => {
    const id = await make.contact(t.a, { email: 'a.rather.long.address.for.a.small.screen@example.com' });
    const { context, page, problems } = await h.open({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    await h.signIn(page);
    for (const [path, heading] of [
      ['/contacts/import', 'Import contacts'],
      ['/contacts/fields', 'Custom fields'],
      [`/contacts/${id}`, 'Ada Lovelace'],
    ]) {
      await page.goto(`${base}/app${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      if (heading === 'Ada Lovelace') await page.getByRole('button', { name: 'Export data' }).waitFor();
      const width = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(width[0] <= width[1], `${path} wider than the screen: ${width[0]} > ${width[1]}`);
    }
    await h.shot(page, 'contacts-contact-phone');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('answers an unknown page below Contacts with Page not found', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.goto(`${base}/app/contacts/nothing-here`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });
});
