import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, type Client } from '../helpers.js';
import {
  automationBase,
  automationRow,
  automationWithEmails,
  setupAutomations,
  type AutomationsContext,
} from '../modules/automations.helpers.js';
import { createSend, sendForm } from '../modules/single-sends.helpers.js';
import { senderForm } from '../modules/senders.helpers.js';

/**
 * Fastify answers HEAD for every GET route by running the GET handler. A few GET routes change
 * state (the API's contract makes them GET); a HEAD, as link prefetchers, mail scanners and
 * checkers send, must never change anything: those routes have no HEAD and answer like an
 * unknown method, 404 `Route not found`. Each check below is followed by the GET itself, which
 * does change the record, so the check would see a HEAD that ran the handler.
 */
describe('HEAD requests to GET routes that change state change nothing', () => {
  let t: AutomationsContext;
  let a: Client;
  before(async () => {
    t = await setupAutomations({ sink: true });
    a = t.a;
  });
  after(() => t.close());

  const keys = () => ({ publickey: a.keys!.public_key, secretkey: a.keys!.secret_key });
  async function head(url: string, withKeys = true) {
    const res = await t.app.inject({ method: 'HEAD', url, headers: withKeys ? keys() : {} });
    return { status: res.statusCode, body: res.body };
  }
  function assertNoRoute(r: { status: number; body: string }, url: string) {
    assert.equal(r.status, 404, `HEAD ${url}`);
    // A HEAD answer has no body; the status is what the client sees.
    assert.equal(r.body, '', `HEAD ${url}`);
  }
  const count = async (table: 'automations' | 'single_sends' | 'mail_messages') =>
    Number(
      (
        await t.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('/automations/set-live and /automations/pause: the status stays', async () => {
    const base = await automationBase(t, a);
    const utr = await automationWithEmails(a, base, 1);
    const setLive = `/automations/set-live?utr=${utr}`;
    const headSetLive = await head(setLive);
    assert.equal((await automationRow(t, utr)).status, 0, 'still a draft');
    assert.equal((await automationRow(t, utr)).live_at, null);
    assertNoRoute(headSetLive, setLive);
    assert.equal((await a.get('/automations/set-live', { utr })).status, 200);
    assert.equal((await automationRow(t, utr)).status, 1, 'the GET sets it live');

    const pause = `/automations/pause?utr=${utr}`;
    const headPause = await head(pause);
    assert.equal((await automationRow(t, utr)).status, 1, 'still live');
    assertNoRoute(headPause, pause);
    assert.equal((await a.get('/automations/pause', { utr })).status, 200);
    assert.equal((await automationRow(t, utr)).status, 0, 'the GET pauses it');
  });

  it('/automations/duplicate: no copy is made', async () => {
    const base = await automationBase(t, a);
    const utr = await automationWithEmails(a, base, 1);
    const before = await count('automations');
    const url = `/automations/duplicate?utr=${utr}`;
    const r = await head(url);
    assert.equal(await count('automations'), before);
    assertNoRoute(r, url);
    assert.equal((await a.get('/automations/duplicate', { utr })).status, 200);
    assert.equal(await count('automations'), before + 1, 'the GET copies it');
  });

  it('/single/send/duplicate: no copy is made', async () => {
    const base = await automationBase(t, a);
    const utr = await createSend(a, sendForm(base, { schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }));
    const before = await count('single_sends');
    const url = `/single/send/duplicate?utr=${utr}`;
    const r = await head(url);
    assert.equal(await count('single_sends'), before);
    assertNoRoute(r, url);
    assert.equal((await a.get('/single/send/duplicate', { utr })).status, 200);
    assert.equal(await count('single_sends'), before + 1, 'the GET copies it');
  });

  it('/sender/resend-mail: no mail is queued', async () => {
    const saved = await a.post('/sender/save', senderForm());
    assert.equal(saved.status, 200, saved.text);
    const id = saved.body.id as number;
    // The last mail a minute ago, so a resend would go out.
    await t.database.db.updateTable('senders').set({ send_at: '2000-01-01 00:00:00' }).where('id', '=', id).execute();
    const before = await count('mail_messages');
    const url = `/sender/resend-mail?sender_id=${id}`;
    const r = await head(url);
    assert.equal(await count('mail_messages'), before);
    const row = await t.database.db.selectFrom('senders').select('send_at').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.send_at, '2000-01-01 00:00:00');
    assertNoRoute(r, url);
    assert.equal((await a.get('/sender/resend-mail', { sender_id: id })).status, 200);
    assert.equal(await count('mail_messages'), before + 1, 'the GET queues the mail');
  });

  it('/sender/verify (public, the mailed link): the sender stays unverified', async () => {
    const form = senderForm();
    const saved = await a.post('/sender/save', form);
    assert.equal(saved.status, 200, saved.text);
    await drainQueue(t);
    const mail = await t.sink!.waitFor((m) => m.envelope.to.includes(form.from_email));
    const link = /\/sender\/verify\?token=[A-Za-z0-9._%-]+/.exec(mail.text ?? '')?.[0];
    assert.ok(link, 'the mail carries a verification link');
    const verified = async () =>
      (await t.database.db.selectFrom('senders').select('is_verified').where('id', '=', saved.body.id).executeTakeFirstOrThrow())
        .is_verified;
    const r = await head(link, false);
    assert.equal(await verified(), 0);
    assertNoRoute(r, link);
    assert.equal((await t.app.inject({ method: 'GET', url: link })).statusCode, 200);
    assert.equal(await verified(), 1, 'the GET verifies it');
  });

  it('GET routes that only read still answer HEAD', async () => {
    const base = await automationBase(t, a);
    const utr = await automationWithEmails(a, base, 1);
    assert.equal((await head(`/automations/details?utr=${utr}`)).status, 200);
    assert.equal((await head(`/sender/details?sender_id=${base.sender}`)).status, 200);
    assert.equal((await head('/health/live', false)).status, 200);
  });
});
