/**
 * No GET route writes. Every GET route of the OpenAPI document is called, with plausible
 * parameters, on an account seeded with a bit of everything (contacts, a segment with an
 * engagement condition and a live automation on it, a sent single send, designs, webhooks, forms,
 * people), and every table is compared before and after each request. The only exceptions are
 * the routes whose documented purpose is an action, listed below with their reason.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { trackingLinks } from '../../src/delivery/tracking.js';
import type { Db } from '../../src/db/index.js';
import { testClock } from '../../src/util/clock.js';
import { isoMicros } from '../../src/util/time.js';
import { drainQueue, ENGINE, setup, type Client, type Response } from '../helpers.js';
import { addSchedule, automationForm, createAutomation, scheduleForm } from '../modules/automations.helpers.js';
import { createSegment } from '../modules/segments.helpers.js';
import { DAY, definition } from '../modules/segments/engagement.helpers.js';
import { senderForm, STATE } from '../modules/senders.helpers.js';
import { person } from '../modules/access/sessions.helpers.js';
import { createSend, group, sendForm, sendRow, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { createEndpoint, emit } from '../modules/webhooks.helpers.js';
import { mjmlText } from '../support/designs.js';
import { stillImage, uploadImage } from '../modules/media.helpers.js';

/** GET routes that may write, each with why: the original interface defines them as actions, or recording is their purpose. */
const ACTIONS: Record<string, string> = {
  'GET /automations/pause': 'pauses the automation (an action in the original interface)',
  'GET /automations/set-live': 'sets the automation live and enrols its members (an action in the original interface)',
  'GET /automations/duplicate': 'copies the automation (an action in the original interface)',
  'GET /single/send/duplicate': 'copies the single send (an action in the original interface)',
  'GET /sender/resend-mail': 'mails the sender its verification link again (an action in the original interface)',
  'GET /t/open/{token}.gif': 'the open pixel: recording the open is its purpose',
  'GET /t/click/{token}': 'the click redirect: recording the click is its purpose',
  'GET /sender/verify': 'the link mailed to a sender: following it verifies the sender',
};

/** Tables that are bookkeeping of the store itself, not data: the migrations' own. */
const SKIPPED_TABLES = /^kysely_/;

async function tableNames(db: Db): Promise<string[]> {
  const rows =
    ENGINE === 'postgres'
      ? await sql<{ name: string }>`
          select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  return rows.rows
    .map((r) => r.name)
    .filter((n) => !SKIPPED_TABLES.test(n))
    .sort();
}

type Snapshot = Map<string, string[]>;

/** Every row of every table, as sorted JSON texts per table. */
async function snapshot(db: Db, names: string[]): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const name of names) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    out.set(name, rows.map((r) => JSON.stringify(r)).sort());
  }
  return out;
}

/** What changed between two snapshots: per table, the rows gone and the rows come (a few of each). */
function changes(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const [name, rows] of after) {
    const old = new Set(before.get(name) ?? []);
    const now = new Set(rows);
    const gone = [...old].filter((r) => !now.has(r));
    const came = [...now].filter((r) => !old.has(r));
    if (gone.length || came.length) out.push(`${name}: -${JSON.stringify(gone.slice(0, 2))} +${JSON.stringify(came.slice(0, 2))}`);
  }
  return out;
}

interface Operation {
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  security?: unknown[];
  'x-auth'?: string;
  'x-action'?: boolean;
}

describe('no GET route writes', () => {
  let t: SendsContext;
  let consoleDir: string;
  let owner: Client;
  let doc: { paths: Record<string, { get?: Operation }> };
  const values: {
    query: Record<string, unknown>;
    byPath: Record<string, Record<string, unknown>>;
    /** A path's one parameter, or its parameters by name. */
    path: Record<string, string | Record<string, string>>;
  } = {
    query: {},
    byPath: {},
    path: {},
  };

  before(async () => {
    // A console folder of its own, so that /app answers its page as a built console does.
    consoleDir = mkdtempSync(join(tmpdir(), 'reads-console-'));
    writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Console</title>');
    const clock = testClock('2030-03-01T12:00:00.000Z');
    t = { ...(await setup({ consoleDir }, { env: { PUBLIC_URL: 'https://mail.example.test' }, clock, sink: true })), clock };
    const a = t.a;
    const userId = a.keys!.user_id;
    owner = await person(t, 'owner');

    // Contacts, a custom field, a sender, unsubscribe lists, a notification recipient, a design.
    const { type, ids } = await typeWith(a, [
      ['ann@example.com', 'Ann'],
      ['bob@example.com', 'Bob'],
      ['cid@example.com', 'Cid'],
    ]);
    assert.equal((await a.post('/custom-fields/save', { field_name: 'shoe_size', field_type: 'number' })).status, 200);
    const sender = await verifiedSender(t, a);
    const news = await group(a);
    assert.equal(
      (await a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: news, email_address: 'cid@example.com' })).status,
      200,
    );
    assert.equal((await a.post('/global-unsubscribes/save', { email_address: 'gone@example.com' })).status, 200);
    assert.equal((await a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    const design = await a.post('/designs/create', { name: 'Spring', template_json: mjmlText('Hello ((first_name))') });
    assert.equal(design.status, 200, design.text);
    // A transactional template with a version.
    const txTemplate = await a.request('POST', '/v3/templates', { json: { name: 'Reset', generation: 'dynamic' } });
    assert.equal(txTemplate.status, 201, txTemplate.text);
    const txVersion = await a.request('POST', `/v3/templates/${txTemplate.body.id}/versions`, {
      json: { name: 'v1', subject: 'Reset {{name}}', html_content: '<p>Hi {{name}}</p>' },
    });
    assert.equal(txVersion.status, 201, txVersion.text);
    const image = await uploadImage(a, await stillImage('png', 20, 20), 'logo.png');
    assert.equal(image.status, 200, image.text);
    const imageToken = new URL(image.body.message.media.url).pathname.split('/')[2];

    // A sent single send, with a tracked link; Ann opened it a little less than 30 days ago.
    const base = { sender, group: news, type };
    const sent = await createSend(
      a,
      sendForm(base, {
        template_html: '<html><body><p>Hi ((first_name)) <a href="https://example.com/spring">Spring</a></p></body></html>',
      }),
    );
    await drainQueue(t);
    const sendId = (await sendRow(t, sent)).id;
    const messages = await t.database.db
      .selectFrom('mail_messages')
      .selectAll()
      .where('single_send_id', '=', sendId)
      .orderBy('id')
      .execute();
    assert.equal(messages.length, 2, 'ann and bob (cid is off the group)');
    const ann = messages.find((m) => m.email_key === 'ann@example.com')!;
    const at = (ms: number) => isoMicros(new Date(t.clock.now().getTime() - ms));
    await t.database.db
      .updateTable('mail_messages')
      .set({ last_human_opened_at: at(30 * DAY - 30 * 60_000), opens: 1 })
      .where('id', '=', ann.id)
      .execute();

    // A segment with an engagement condition, and a live automation on it (Ann is enrolled).
    const segment = await createSegment(a, definition(type, [['engagement', 'opened in the last', '30']]));
    const autoBase = { sender, group: news, type, segment };
    const automation = await createAutomation(a, automationForm(autoBase, { type: 'custom', automation_for: `segments_${segment}` }));
    const email = await addSchedule(a, scheduleForm(autoBase, automation, { waiting_type: 'days', waiting_period: 30 }));
    assert.equal((await a.get('/automations/set-live', { utr: automation })).status, 200);
    // A draft to the segment, whose recipient count reads it.
    const draft = await createSend(a, sendForm(base, { draft: 1, single_send_name: 'Draft', recipient_id: [`segments_${segment}`] }));

    // A webhook endpoint with an event waiting; a sign-up form with a sign-up waiting for its confirmation.
    const endpoint = await createEndpoint(a, 'https://93.184.216.34/hook');
    await emit(t.database, userId, 1, t.clock.now());
    const form = await a.post('/forms/create', { name: 'News', contact_type_id: type, sender_id: sender, unsubscribe_group_id: news });
    assert.equal(form.status, 200, form.text);
    assert.equal((await t.anon.post(`/subscribe/${form.body.id}`, { email: 'dan@example.com' })).status, 200);
    // A sender waiting for its verification.
    const unverified = await a.post('/sender/save', senderForm());
    assert.equal(unverified.status, 200, unverified.text);
    await drainQueue(t);
    // A sending domain, never checked (after the queue ran, so no scheduled check asks DNS): no read checks it.
    const domain = await a.post('/sending-domains/create', { domain: 'walk.example.com' });
    assert.equal(domain.status, 200, domain.text);
    const link = (pattern: RegExp) => {
      for (const m of t.sink!.messages) {
        const found = pattern.exec(m.text ?? '');
        if (found) return found[1];
      }
      throw new Error(`no mail with ${pattern}`);
    };

    // An hour and a half later: Ann's open has left the 30 days, Bob has just opened. Anything that
    // recomputed the segment now would take Ann out and enrol Bob.
    t.clock.advance(90 * 60_000);
    const bob = messages.find((m) => m.email_key === 'bob@example.com')!;
    await t.database.db
      .updateTable('mail_messages')
      .set({ last_human_opened_at: isoMicros(t.clock.now()), opens: 1 })
      .where('id', '=', bob.id)
      .execute();

    const links = trackingLinks(t.config);
    const key = await t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('user_id', '=', userId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const templates = (await a.get('/get-design/template')).body.message.templates as Array<{ preview_image: string }>;
    values.query = {
      page: 1,
      per_page: 5,
      contact_type_id: type,
      contact_id: ids[0],
      q: 'ann',
      email: 'ann@example.com',
      country_id: 101,
      state_id: STATE.id,
      sender_id: sender,
      segment_id: segment,
      groupId: news,
      endpoint_id: endpoint.id,
      days: 30,
      sunset_days: 90,
      sunset_min_messages: 3,
      limit: 5,
      actor_type: 'key',
      actor_id: key.id,
      action: 'POST /contacts/add',
      since: '2030-01-01T00:00:00Z',
      until: '2031-01-01T00:00:00Z',
      token: link(/\/sender\/verify\?token=([^\s"<]+)/),
    };
    values.byPath = {
      '/single-send/recipients-count': { utr: draft },
      '/unsubscribes-groups/details': { id: news },
      '/forms/details': { id: form.body.id },
      '/designs/details': { id: design.body.id },
      '/media/details': { id: image.body.message.media.id },
      '/sender/resend-mail': { sender_id: unverified.body.id },
      '/sending-domains/details': { id: domain.body.message.domain.id },
    };
    for (const p of ['/automations', '/automations/details', '/automations/stats', '/automations/schedule', '/automations/duplicate'])
      values.byPath[p] = { utr: automation };
    for (const p of ['/automations/pause', '/automations/set-live']) values.byPath[p] = { utr: automation };
    values.query.utr = sent;
    values.path = {
      '/images/templates/{file}': templates[0].preview_image,
      '/t/open/{token}.gif': links.openToken(ann.id),
      '/t/click/{token}': links.trapUrl(ann.id).split('/t/click/')[1],
      '/u/{token}': links.unsubscribeToken(ann.id),
      '/designs/{utr}': email.utr,
      // One value fills every parameter of a path: the file name may be anything.
      '/media/{token}/{file}': imageToken,
      '/media/{token}/thumb/{file}': imageToken,
      '/subscribe/confirm/{token}': link(/\/subscribe\/confirm\/(\S+)/),
      '/v3/templates/{template_id}': txTemplate.body.id,
      '/v3/templates/{template_id}/versions/{version_id}': { template_id: txTemplate.body.id, version_id: txVersion.body.id },
    };
    doc = t.app.swagger() as typeof doc;
  });
  after(async () => {
    await t.close();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  /** The request of a documented GET route: its URL with every path and query parameter filled. */
  function requestOf(path: string, op: Operation): { url: string; query: Record<string, unknown> } {
    let url = path;
    const query: Record<string, unknown> = {};
    for (const p of op.parameters ?? []) {
      if (p.in === 'path') {
        const entry = values.path[path];
        const v = typeof entry === 'object' ? entry[p.name] : entry;
        assert.ok(v !== undefined, `GET ${path}: no value for its path parameter ${p.name}: give it one in this test`);
        url = url.replace(`{${p.name}}`, encodeURIComponent(v));
      } else if (p.in === 'query') {
        const v = values.byPath[path]?.[p.name] ?? values.query[p.name];
        if (v === undefined && p.required)
          assert.fail(`GET ${path}: no value for its required parameter ${p.name}: give it one in this test`);
        if (v !== undefined) query[p.name] = v;
      }
    }
    return { url, query };
  }

  /** Who calls a route: nobody for a public one, a session for a person's own, else the key and a person. */
  function callersOf(op: Operation): Array<[string, Client]> {
    if (Array.isArray(op.security) && op.security.length === 0) return [['anonymous', t.anon]];
    if (op['x-auth'] === 'session') return [['session', owner]];
    return [
      ['key', t.a],
      ['session', owner],
    ];
  }

  it('lists as actions exactly the GET routes the document declares actions, and the public ones that record', () => {
    const declared = Object.entries(doc.paths)
      .filter(([, item]) => item.get?.['x-action'] === true)
      .map(([path]) => `GET ${path}`)
      .sort();
    assert.deepEqual(declared, [
      'GET /automations/duplicate',
      'GET /automations/pause',
      'GET /automations/set-live',
      'GET /sender/resend-mail',
      'GET /single/send/duplicate',
    ]);
    for (const route of declared) assert.ok(route in ACTIONS, route);
    for (const route of Object.keys(ACTIONS)) assert.ok(doc.paths[route.slice(4)]?.get, `${route} is a documented GET route`);
  });

  it('leaves every table as it was after each GET route that is not an action, by key, by session and anonymously', async () => {
    const db = t.database.db;
    const names = await tableNames(db);
    assert.ok(names.length > 40, names.join(', '));
    // Auth bookkeeping (a key's last_used_at, a session's last_seen_at) is written at most once a
    // minute, and the clock stands still: one request each writes it for the rest of the walk.
    assert.equal((await t.a.get('/contacts-type')).status, 200);
    assert.equal((await owner.get('/session')).status, 200);
    let last = await snapshot(db, names);
    const walked: string[] = [];
    const failures: string[] = [];
    const wrote: string[] = [];
    for (const path of Object.keys(doc.paths).sort()) {
      const op = doc.paths[path].get;
      if (!op || `GET ${path}` in ACTIONS) continue;
      const { url, query } = requestOf(path, op);
      for (const [who, client] of callersOf(op)) {
        const r: Response = await client.get(url, query);
        assert.ok(r.status < 500, `GET ${path} by ${who}: ${r.status} ${r.text.slice(0, 200)}`);
        if (r.status >= 400) failures.push(`GET ${path} by ${who}: ${r.status} ${r.text.slice(0, 120)}`);
        const now = await snapshot(db, names);
        for (const change of changes(last, now)) wrote.push(`GET ${path} by ${who} wrote ${change}`);
        last = now;
        walked.push(`GET ${path} by ${who}`);
      }
    }
    assert.deepEqual(wrote, []);
    // Each route answered as it does for a plausible request, so its reading code ran.
    assert.deepEqual(failures, []);
    assert.ok(walked.length >= 90, `${walked.length} requests`);
    for (const route of ['/segment/list', '/segment/email/list', '/single-send/recipients-count'])
      assert.ok(walked.includes(`GET ${route} by key`), route);
  });

  it('writes one audit entry for each GET action by key or session', async () => {
    const db = t.database.db;
    for (const route of Object.keys(ACTIONS)) {
      const path = route.slice(4);
      const op = doc.paths[path].get!;
      const { url, query } = requestOf(path, op);
      const [who, client] = callersOf(op)[0];
      const before = await db.selectFrom('audit_log').select('id').where('action', '=', route).execute();
      const r = await client.get(url, query);
      assert.ok(r.status < 400, `${route} by ${who}: ${r.status} ${r.text.slice(0, 200)}`);
      const entries = await db.selectFrom('audit_log').select(['status', 'target']).where('action', '=', route).execute();
      if (who === 'anonymous') assert.equal(entries.length, before.length, `${route} has no one to record`);
      else assert.equal(entries.length, before.length + 1, `${route} is written to the audit log`);
    }
  });
});
