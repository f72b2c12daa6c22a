import assert from 'node:assert/strict';
import type { Client } from '../helpers.js';

export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const RNF = { status: 'failed', errors: 'Record Not Found' };
export const GROUP_KEYS = ['id', 'user_id', 'rand_id', 'group_name', 'description', 'is_display', 'created_at', 'updated_at'];

/** Saves a group (defaults: a displayed "Newsletter"); returns its id. */
export async function addGroup(c: Client, fields: Record<string, unknown> = {}): Promise<number> {
  const r = await c.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'Weekly news', is_display: 1, ...fields });
  assert.equal(r.status, 200, r.text);
  return r.body.id;
}

/** A group's details response. */
export async function details(c: Client, id: unknown) {
  return c.get('/unsubscribes-groups/details', { id });
}

/** The group's recipients, as listed. */
export async function recipients(
  c: Client,
  groupId: number,
): Promise<Array<{ id: number; email_address: string; unsubscribe_groups_id: number }>> {
  const r = await c.get('/unsubscribes-groups/recipients-list', { groupId });
  assert.equal(r.status, 200, r.text);
  return r.body.message.recipients;
}

/** Adds a comma-separated list to the group; returns the new ids. */
export async function addRecipients(c: Client, groupId: number, email_address: string): Promise<number[]> {
  const r = await c.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: groupId, email_address });
  assert.equal(r.status, 200, r.text);
  return r.body.ids;
}
