import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mjmlText } from '../support/designs.js';
import { addSchedule, automationBase, automationForm, createAutomation, scheduleForm } from './automations.helpers.js';
import { createSend, group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';
import { stillImage, uploadImage } from './media.helpers.js';

describe('where an image is used', () => {
  let t: SendsContext;
  before(async () => {
    t = await setupSends();
  });
  after(() => t.close());

  const upload = async () => {
    const r = await uploadImage(t.a, await stillImage('png', 20, 20), 'logo.png');
    assert.equal(r.status, 200, r.text);
    return r.body.message.media as { id: number; url: string };
  };
  const usedIn = async (id: number) => {
    const r = await t.a.get('/media/details', { id });
    assert.equal(r.status, 200, r.text);
    return r.body.message.media.used_in;
  };

  it('names the designs, single sends and automation emails whose HTML names its URL, and refuses the delete while they do', async () => {
    const m = await upload();
    const unused = await upload();
    const img = `<img src="${m.url}" alt="Logo">`;
    assert.deepEqual(await usedIn(m.id), []);

    const d = await t.a.post('/designs/create', { name: 'Spring design', template_json: mjmlText(`Hello ${img}`) });
    assert.equal(d.status, 200, d.text);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type: (await typeWith(t.a, [['ada@example.com']])).type };
    const send = await createSend(
      t.a,
      sendForm(base, { single_send_name: 'April news', template_html: `<html><body>${img}</body></html>` }),
    );
    const auto = await automationBase(t, t.a);
    const automation = await createAutomation(t.a, automationForm(auto, { automation_name: 'Welcome series' }));
    const email = await addSchedule(t.a, scheduleForm(auto, automation, { subject: 'Hello there', template_html: `<p>${img}</p>` }));

    assert.deepEqual(await usedIn(m.id), [
      { type: 'design', id: d.body.id, name: 'Spring design' },
      { type: 'single_send', id: send, name: 'April news' },
      { type: 'automation_email', id: email.utr, name: 'Welcome series: Hello there' },
    ]);
    assert.deepEqual(await usedIn(unused.id), []);

    const refused = await t.a.delete('/media/delete', { id: m.id });
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, {
      status: 'failed',
      errors:
        'The image is used by design "Spring design", single send "April news" and automation email "Welcome series: Hello there"; remove it from there first.',
    });
    assert.equal((await t.anon.app.inject({ method: 'GET', url: new URL(m.url).pathname })).statusCode, 200);

    // Once nothing names it any more, it can go.
    assert.equal((await t.a.delete('/designs/delete', { id: d.body.id })).status, 200);
    assert.equal((await t.a.delete('/single/send/delete', { utr: send })).status, 200);
    assert.equal((await t.a.delete('/automations/delete', { utr: automation })).status, 200);
    assert.deepEqual(await usedIn(m.id), []);
    assert.equal((await t.a.delete('/media/delete', { id: m.id })).status, 200);
    assert.equal((await t.a.delete('/media/delete', { id: unused.id })).status, 200);
  });

  it('never names another account’s records', async () => {
    const m = await upload();
    const d = await t.b.post('/designs/create', { name: 'Copycat', template_json: mjmlText(`<img src="${m.url}">`) });
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(await usedIn(m.id), []);
    assert.equal((await t.a.delete('/media/delete', { id: m.id })).status, 200);
  });
});
