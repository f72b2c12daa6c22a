import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make } from '../../helpers.js';
import { createSegment } from '../segments.helpers.js';
import { createSend, group, sendForm, sendRow, setupSends, verifiedSender, type SendsContext } from '../single-sends.helpers.js';
import { countInList, countOf, DAY, definition, membersOf, seedMessage, type Cond } from './engagement.helpers.js';

const ALL = ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus'].map((n) => `${n}@example.com`);
const INDIA = 101;
const CANADA = 38;

/**
 * Account A's contact type holds seven people with a history each (seeded by SQL): ann received
 * send S1 and opened it 5 days ago; bob received S1 and clicked it 3 days ago (a click is an
 * open); cid received S1 and only a machine opened it; dee's copy of S1 bounced; eve got nothing
 * from A (but account B mailed her, and she opened B's mail); fay got only a test mail, which she
 * opened; gus got an automation email 40 days ago and opened it then. Send S2 went to no one.
 */
describe('segment conditions on engagement and single sends', () => {
  let t: SendsContext;
  let type: number;
  let s1: string;
  let s2: string;
  let bUtr: string;

  before(async () => {
    t = await setupSends();
    const a = t.a.keys!.user_id;
    const b = t.b.keys!.user_id;
    type = await make.contactType(t.a, 'People');
    const country: Record<string, number> = { ann: INDIA, bob: CANADA, cid: INDIA, dee: CANADA, eve: INDIA, fay: CANADA, gus: INDIA };
    for (const email of ALL) await make.contact(t.a, { contact_type_id: type, email, country: country[email.split('@')[0]] });
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    s1 = await createSend(
      t.a,
      sendForm(base, { single_send_name: 'S1', schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }),
    );
    s2 = await createSend(
      t.a,
      sendForm(base, { single_send_name: 'S2', schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }),
    );
    const s1Id = (await sendRow(t, s1)).id;
    await seedMessage(t, { userId: a, email: 'ann@example.com', sendId: s1Id, sentAgo: 10 * DAY, openedAgo: 5 * DAY });
    await seedMessage(t, { userId: a, email: 'Bob@Example.com', sendId: s1Id, sentAgo: 10 * DAY, clickedAgo: 3 * DAY });
    await seedMessage(t, { userId: a, email: 'cid@example.com', sendId: s1Id, sentAgo: 10 * DAY, machineOpens: 3 });
    await seedMessage(t, { userId: a, email: 'dee@example.com', sendId: s1Id, sentAgo: 10 * DAY, state: 'bounced' });
    await seedMessage(t, { userId: a, email: 'fay@example.com', kind: 'test', sentAgo: DAY, openedAgo: DAY, clickedAgo: DAY });
    await seedMessage(t, { userId: a, email: 'gus@example.com', kind: 'automation', sentAgo: 40 * DAY, openedAgo: 40 * DAY });
    const bType = await make.contactType(t.b, 'B people');
    await make.contact(t.b, { contact_type_id: bType, email: 'eve@example.com' });
    const bBase = { sender: await verifiedSender(t, t.b), group: await group(t.b), type: bType };
    bUtr = await createSend(t.b, sendForm(bBase, { schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }));
    const bId = (await sendRow(t, bUtr)).id;
    await seedMessage(t, { userId: b, email: 'eve@example.com', sendId: bId, sentAgo: DAY, openedAgo: DAY, clickedAgo: DAY });
  });
  after(() => t.close());

  const who = (...names: string[]) => names.map((n) => `${n}@example.com`).sort();
  const without = (members: string[]) => ALL.filter((e) => !members.includes(e)).sort();

  /** Checks a definition through the count, a saved segment's list and its count in the segment list. */
  async function expectMembers(conds: Cond[], expected: string[], queryType?: string): Promise<number> {
    const form = definition(type, conds, queryType);
    assert.equal(await countOf(t.a, form), expected.length, JSON.stringify(conds));
    const id = await createSegment(t.a, form);
    assert.deepEqual(await membersOf(t.a, id), expected, JSON.stringify(conds));
    assert.equal(await countInList(t.a, id), expected.length);
    return id;
  }

  const engagement: Array<[string, string, string[]]> = [
    ['opened in the last', '7', who('ann', 'bob')],
    ['clicked in the last', '7', who('bob')],
    ['received in the last', '30', who('ann', 'bob', 'cid')],
    ['received in the last', '60', who('ann', 'bob', 'cid', 'gus')],
    ['opened in the last', '60', who('ann', 'bob', 'gus')],
    ['opened in the last', '4', who('bob')],
    ['clicked in the last', '2', []],
  ];
  for (const [op, days, expected] of engagement) {
    it(`engagement ${op} ${days} days, and its complement`, async () => {
      await expectMembers([['engagement', op, days]], expected);
      await expectMembers([['engagement', `not ${op}`, days]], without(expected));
    });
  }

  it('single_send received, opened, clicked, and their complements (never sent to the address included)', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['received', s1, who('ann', 'bob', 'cid')],
      ['opened', s1, who('ann', 'bob')],
      ['clicked', s1, who('bob')],
      ['received', s2, []],
      ['opened', s2, []],
      ['clicked', s2, []],
    ];
    for (const [op, utr, expected] of cases) {
      await expectMembers([['single_send', op, utr]], expected);
      await expectMembers([['single_send', `not ${op}`, utr]], without(expected));
    }
  });

  it('combines with a field condition under and / or', async () => {
    await expectMembers(
      [
        ['engagement', 'opened in the last', '7'],
        ['country', 'is', 'IN'],
      ],
      who('ann'),
    );
    await expectMembers(
      [
        ['engagement', 'opened in the last', '7'],
        ['country', 'is', 'IN'],
      ],
      who('ann'),
      'and',
    );
    await expectMembers(
      [
        ['engagement', 'clicked in the last', '7'],
        ['country', 'is', 'IN'],
      ],
      who('ann', 'bob', 'cid', 'eve', 'gus'),
      'or',
    );
    await expectMembers(
      [
        ['single_send', 'not opened', s1],
        ['engagement', 'received in the last', '30'],
        ['city', 'is not empty'],
      ],
      [],
    );
    await expectMembers(
      [
        ['single_send', 'not opened', s1],
        ['engagement', 'received in the last', '30'],
      ],
      who('cid'),
    );
  });

  it('stores the conditions as given and lists them back', async () => {
    const id = await createSegment(
      t.a,
      definition(type, [
        ['Engagement', 'Opened In The Last', '7'],
        ['single_send', 'clicked', s1],
      ]),
    );
    const listed = (await t.a.get('/segment/list')).body.message.segments.find((s: { id: number }) => s.id === id);
    assert.deepEqual(listed.select_field, ['engagement', 'single_send']);
    assert.deepEqual(listed.select_operator, ['opened in the last', 'clicked']);
    assert.deepEqual(listed.value, ['7', s1]);
    assert.equal(listed.segment_emails_count, 1);
  });

  it('counts people only: a machine open, a test mail and another account never make an open', async () => {
    await expectMembers([['engagement', 'opened in the last', '3650']], who('ann', 'bob', 'gus'));
    await expectMembers([['engagement', 'received in the last', '3650']], who('ann', 'bob', 'cid', 'gus'));
  });

  it("rejects another account's send, an unknown one, and a deleted one: The selected value is invalid.", async () => {
    const gone = await createSend(t.a, await sendFormOf(t, type));
    assert.equal((await t.a.delete('/single/send/delete', { utr: gone })).status, 200);
    for (const utr of [bUtr, 'no-such-utr', gone]) {
      const r = await t.a.post('/segment/create', {
        segment_name: 'Bad',
        ...definition(type, [
          ['city', 'is empty'],
          ['single_send', 'opened', utr],
        ]),
      });
      assert.equal(r.status, 422, utr);
      assert.deepEqual(r.body, fieldErrors({ 'value.0': ['The selected value is invalid.'] }));
    }
    const r = await t.a.post('/segment/count', definition(type, [['single_send', 'received', bUtr]]));
    assert.deepEqual(r.body, fieldErrors({ 'value.0': ['The selected value is invalid.'] }));
  });

  it('validates the days and the operators in the segment validation style, all failures together', async () => {
    const r = await t.a.post('/segment/create', {
      segment_name: 'Bad',
      ...definition(type, [
        ['engagement', 'opened in the last', '0'],
        ['engagement', 'clicked in the last', '3651'],
        ['engagement', 'received in the last', 'seven'],
        ['engagement', 'not opened in the last', '7.5'],
        ['engagement', 'is', 'x'],
        ['city', 'opened in the last', '7'],
        ['single_send', 'opened in the last', '7'],
      ]),
    });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        'value.0': ['The value.0 must be at least 1.'],
        'value.1': ['The value.1 must not be greater than 3650.'],
        'value.2': ['The value.2 must be an integer.'],
        'value.3': ['The value.3 must be an integer.'],
        'select_operator.4': ['The selected select operator.4 is invalid.'],
        'select_operator.5': ['The selected select operator.5 is invalid.'],
        'select_operator.6': ['The selected select operator.6 is invalid.'],
      }),
    );
    const missing = await t.a.post('/segment/count', definition(type, [['engagement', 'opened in the last']]));
    assert.deepEqual(missing.body, fieldErrors({ 'value.0': ['The value.0 field is required.'] }));
    const ok = await t.a.post('/segment/count', definition(type, [['engagement', 'opened in the last', '3650']]));
    assert.equal(ok.status, 200);
    assert.equal((await t.a.post('/segment/count', definition(type, [['engagement', 'opened in the last', '1']]))).status, 200);
  });
});

/** A valid send form of account A with its own sender and group (for a send that is then deleted). */
async function sendFormOf(t: SendsContext, type: number) {
  return sendForm(
    { sender: await verifiedSender(t, t.a), group: await group(t.a), type },
    { single_send_name: 'Gone', schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' },
  );
}
