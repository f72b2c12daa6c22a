import assert from 'node:assert/strict';
import { unseal } from '../../../src/util/seal.js';
import { checkAgainstDocument, Client, type Response, type TestContext } from '../../helpers.js';

/** A password long enough for the rules. */
export const PASSWORD = 'correct horse battery staple';

/** The one-time link last mailed to `email` (invitation or reset), read from the queued mail (sealed with the app secret). */
export async function mailedLink(t: Pick<TestContext, 'database' | 'config'>, email: string): Promise<{ url: string; token: string }> {
  const row = await t.database.db
    .selectFrom('mail_messages')
    .select('payload')
    .where('kind', '=', 'access')
    .where('email_key', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const message = JSON.parse(unseal(t.config.appSecret, 'access-mail', row.payload!)!) as { text: string };
  const url = /https?:\/\/\S+\/app\/(?:invite|reset)\/\S+/.exec(message.text)![0];
  return { url, token: url.slice(url.lastIndexOf('/') + 1) };
}

/** The session cookie's value in a sign-in answer's `Set-Cookie`. */
export function sessionCookie(r: Response): string {
  const header = ([] as string[])
    .concat((r.headers['set-cookie'] as string | string[]) ?? [])
    .find((c) => c.startsWith('campaign_session='));
  assert.ok(header, `no session cookie: ${r.text}`);
  return header.slice('campaign_session='.length).split(';')[0];
}

/**
 * A signed-in person: requests carry the session cookie and the CSRF token (a page sends it with
 * every request; GET routes that change something need it too), unless told otherwise.
 */
export class SessionClient extends Client {
  constructor(
    app: Client['app'],
    readonly cookie: string,
    readonly csrf: string,
    readonly personId: number,
  ) {
    super(app, null);
  }

  override request(method: string, path: string, opts: Parameters<Client['request']>[2] = {}): Promise<Response> {
    const headers = { cookie: `campaign_session=${this.cookie}`, 'x-csrf-token': this.csrf, ...opts.headers };
    return super.request(method, path, { ...opts, headers });
  }
}

/** Signs in through the API; fails the test unless it works. */
export async function signIn(t: Pick<TestContext, 'anon'>, email: string, password = PASSWORD, extra: object = {}): Promise<SessionClient> {
  const r = await t.anon.request('POST', '/session/sign-in', { json: { email, password, ...extra } });
  assert.equal(r.status, 200, r.text);
  return new SessionClient(t.anon.app, sessionCookie(r), r.body.message.csrf_token, r.body.message.user.id);
}

let seq = 0;

/** Invites a person with `role` through `inviter`, accepts the mailed invitation and signs them in. */
export async function person(t: TestContext, role: string, inviter: Client = t.a): Promise<SessionClient & { email: string }> {
  const email = `person${++seq}.${role}@example.com`;
  const r = await inviter.post('/users/invite', { email, role });
  assert.equal(r.status, 200, r.text);
  const { token } = await mailedLink(t, email);
  const accepted = await t.anon.post('/session/accept-invite', { token, name: `Person ${seq}`, password: PASSWORD });
  assert.equal(accepted.status, 200, accepted.text);
  return Object.assign(await signIn(t, email), { email });
}

/** The 403 of a person without `scope`. */
export const personRefused = (scope: string) => ({ status: 'failed', errors: `You are not allowed to ${scope}.` });

/** A JSON POST from the client address `ip` (with `headers`), checked against the document as every request of the suite is. */
export async function postFrom(
  t: Pick<TestContext, 'app'>,
  ip: string,
  path: string,
  json: object,
  headers: Record<string, string> = {},
): Promise<Response> {
  const res = await t.app.inject({
    method: 'POST',
    url: path,
    payload: JSON.stringify(json),
    headers: { 'content-type': 'application/json', ...headers },
    remoteAddress: ip,
  });
  checkAgainstDocument(t.app, 'POST', path, res);
  return { status: res.statusCode, headers: res.headers, body: res.json(), text: res.body };
}
