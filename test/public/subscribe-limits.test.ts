import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, make } from '../helpers.js';
import { setupSends, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';

const HOUR = 60 * 60 * 1000;

// A proxy on loopback (where app.inject's requests come from) is trusted, so each test can post
// from as many client addresses as a botnet would: the caps must hold without the per-IP one.
describe('sign-up forms: caps on confirmation mails', () => {
  let t: SendsContext;
  let type: number;
  let sender: number;
  let client = 0;
  /** A fresh client address on every call. */
  const nextIp = () => `10.${(++client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;

  const createForm = async () => {
    const r = await t.a.post('/forms/create', { name: 'News', contact_type_id: type, sender_id: sender });
    assert.equal(r.status, 200, r.text);
    return r.body.id as number;
  };
  const post = (formId: number, email: string, ip = nextIp()) =>
    t.anon.request('POST', `/subscribe/${formId}`, { form: { email }, headers: { 'x-forwarded-for': ip, accept: 'application/json' } });
  /** Confirmation mails queued to addresses matching the SQL LIKE pattern `like` (lower case). */
  const mailsTo = async (like: string) => {
    const row = await t.database.db
      .selectFrom('mail_messages')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('email_key', 'like', like)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  const limited = (message: string) => ({ status: 'failed', errors: message });

  before(async () => {
    t = await setupSends({ sink: true, env: { TRUST_PROXY: '127.0.0.1' } });
    type = await make.contactType(t.a);
    sender = await verifiedSender(t, t.a);
  });
  beforeEach(() => t.clock.advance(2 * 24 * HOUR)); // every test starts with all caps clear
  after(() => t.close());

  it('mails victim+N@example.com at most 5 times for 300 sign-ups from 300 clients to 10 forms', async () => {
    const forms: number[] = [];
    for (let i = 0; i < 10; i++) forms.push(await createForm());
    const answers = new Map<number, number>();
    for (let n = 0; n < 300; n++) {
      const r = await post(forms[n % forms.length], `victim+${n}@example.com`);
      answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
    }
    assert.equal(await mailsTo('victim+%@example.com'), 5, 'one per form an hour, five a day');
    assert.deepEqual([...answers.keys()].sort(), [200, 429]);

    await drainQueue(t);
    const delivered = t.sink!.messages.filter((m) => m.envelope.to.some((to) => /^victim\+\d+@example\.com$/.test(to)));
    assert.equal(delivered.length, 5);
    const [pending] = await t.database.db
      .selectFrom('signup_pending')
      .select('email')
      .where('email', '=', 'victim+0@example.com')
      .execute();
    assert.equal(pending.email, 'victim+0@example.com', 'the address is kept as given');
  });

  it('counts +tag forms and letter case as one address, a day long, across forms', async () => {
    const forms: number[] = [];
    for (let i = 0; i < 6; i++) forms.push(await createForm());
    const answers: number[] = [];
    for (const [i, id] of forms.entries())
      answers.push((await post(id, i % 2 ? `Ada+${i}@Lovelace.Example` : 'ada@lovelace.example')).status);
    assert.deepEqual(answers, [200, 200, 200, 200, 200, 429]);
    const late = await post(forms[5], 'ADA+late@lovelace.example');
    assert.equal(late.status, 429);
    assert.deepEqual(late.body, limited('Too many sign-ups to this address. Try again in 24 hours.'));
    assert.equal(late.headers['retry-after'], '86400');

    t.clock.advance(2 * HOUR);
    const still = await post(forms[5], 'ada@lovelace.example');
    assert.equal(still.status, 429, 'the address cap is a day long');
    assert.equal(still.headers['retry-after'], String(22 * 3600));
    t.clock.advance(22 * HOUR);
    assert.equal((await post(forms[5], 'ada@lovelace.example')).status, 200, 'a day after, the address may sign up again');
    assert.equal(await mailsTo('ada%@lovelace.example'), 6);
  });

  it('mails the same address once an hour per form, whatever its +tag', async () => {
    const id = await createForm();
    for (const email of ['grace@hopper.example', 'grace+news@hopper.example', 'GRACE+x@HOPPER.EXAMPLE']) {
      const r = await post(id, email);
      assert.deepEqual(r.body, { status: 'success', message: 'Check your inbox to confirm your subscription.' });
    }
    assert.equal(await mailsTo('grace%@hopper.example'), 1);
  });

  it('caps the mails of a form to one domain at 50 an hour, then lets them through again', async () => {
    const id = await createForm();
    const other = await createForm();
    for (let i = 0; i < 50; i++) assert.equal((await post(id, `user${i}@bulk.example`)).status, 200, `sign-up ${i}`);
    const over = await post(id, 'user50@BULK.example');
    assert.equal(over.status, 429);
    assert.deepEqual(over.body, limited('Too many sign-ups to addresses at this domain. Try again in 60 minutes.'));
    assert.equal(over.headers['retry-after'], '3600');
    assert.equal((await post(id, 'user50@other-bulk.example')).status, 200, 'another domain');
    assert.equal((await post(other, 'user51@bulk.example')).status, 200, 'another form');
    assert.equal(await mailsTo('%@bulk.example'), 51);

    t.clock.advance(HOUR - 60_000);
    const page = await t.anon.request('POST', `/subscribe/${id}`, {
      form: { email: 'user52@bulk.example' },
      headers: { 'x-forwarded-for': nextIp() },
    });
    assert.equal(page.status, 429);
    assert.equal(page.headers['retry-after'], '60');
    assert.match(page.text, /Too many sign-ups to addresses at this domain\. Try again in 1 minute\./);
    t.clock.advance(60_000);
    assert.equal((await post(id, 'user52@bulk.example')).status, 200, 'an hour after, the domain takes mail again');
  });

  it('caps all the mails of a form at 200 an hour, then lets them through again', async () => {
    const id = await createForm();
    for (let i = 0; i < 200; i++) assert.equal((await post(id, `p${i}@d${i}.example`)).status, 200, `sign-up ${i}`);
    const over = await post(id, 'p200@d200.example');
    assert.equal(over.status, 429);
    assert.deepEqual(over.body, limited('This form has taken too many sign-ups. Try again in 60 minutes.'));
    assert.equal((await post(await createForm(), 'p200@d200.example')).status, 200, 'another form');
    t.clock.advance(HOUR);
    assert.equal((await post(id, 'p201@d201.example')).status, 200, 'an hour after, the form takes sign-ups again');
    assert.equal(await mailsTo('p%@d%.example'), 202);
  });

  it('counts an IPv6 /64 as one client for the per-IP cap', async () => {
    const id = await createForm();
    for (let i = 1; i <= 5; i++) assert.equal((await post(id, `v6.${i}@six.example`, `2001:db8:1:2::${i}`)).status, 200);
    const over = await post(id, 'v6.6@six.example', '2001:db8:1:2:ffff::99');
    assert.equal(over.status, 429);
    assert.deepEqual(over.body, limited('Too many sign-ups to this form from your network. Try again in 60 minutes.'));
    assert.equal((await post(id, 'v6.7@six.example', '2001:db8:1:3::1')).status, 200, 'another /64');
    assert.equal((await post(id, 'v4.1@six.example', '::ffff:192.0.2.1')).status, 200, 'an IPv4 client');
  });

  it('answers an unsubscribed address exactly as any other, so the caps reveal nothing', async () => {
    const gone = 'gone@quiet.example';
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: gone })).status, 200);
    const answersFor = async (email: string) => {
      const answers: number[] = [];
      for (let i = 0; i < 6; i++) answers.push((await post(await createForm(), email)).status);
      return answers;
    };
    assert.deepEqual(await answersFor(gone), [200, 200, 200, 200, 200, 429]);
    assert.deepEqual(await answersFor('live@quiet.example'), [200, 200, 200, 200, 200, 429]);
    assert.equal(await mailsTo('gone%@quiet.example'), 0);
    assert.equal(await mailsTo('live%@quiet.example'), 5);
  });
});
