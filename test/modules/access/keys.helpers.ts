import assert from 'node:assert/strict';
import { Client } from '../../helpers.js';

/** A key of `maker`'s account (a key or a person signed in) with these scopes (`full` or a list), made through the API, as a client. */
export async function keyClient(maker: Client, scopes: 'full' | string[], name = 'Test key'): Promise<Client> {
  const r = await maker.request('POST', '/keys/create', { json: { name, scopes: scopes === 'full' ? ['full'] : scopes } });
  assert.equal(r.status, 200, r.text);
  return new Client(maker.app, {
    user_id: maker.keys?.user_id ?? 0,
    public_key: r.body.message.public_key,
    secret_key: r.body.message.secret_key,
  });
}

/** The 403 of a key without `scope`. */
export const keyRefused = (scope: string) => ({ status: 'failed', errors: `This key is not allowed to ${scope}.` });
