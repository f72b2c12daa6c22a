import assert from 'node:assert/strict';
import { make, setup, type Client, type TestContext } from '../helpers.js';

export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const RNF = { status: 'failed', errors: 'Record Not Found' };
export const Rnf = { status: 'failed', errors: 'Record not found' };

/** Creates a segment (name "Segment" unless given); returns its id. */
export async function createSegment(c: Client, fields: Record<string, unknown>): Promise<number> {
  const r = await c.post('/segment/create', { segment_name: 'Segment', ...fields });
  if (r.status !== 200) throw new Error('segment factory: ' + r.text);
  return r.body.id;
}

/** The segment's members as `/segment/email/list` shows them. */
export async function recipients(c: Client, segmentId: number) {
  const r = await c.get('/segment/email/list', { segment_id: segmentId });
  assert.equal(r.status, 200, r.text);
  return r.body.message.contactEmails as Array<Record<string, any>>;
}

/** The segment as `/segment/list` shows it, or undefined. */
export async function listed(c: Client, id: number): Promise<any> {
  const r = await c.get('/segment/list');
  return (r.body.message.segments as Array<Record<string, any>>).find((s) => s.id === id);
}

/** The segments suites' app (two accounts) and a contact type of A's. */
export async function setupSegments(): Promise<{ t: TestContext; type: number }> {
  const t = await setup();
  return { t, type: await make.contactType(t.a, 'Segment people') };
}
