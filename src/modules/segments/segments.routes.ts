import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkCreated, OkInErrors, OkText, responses } from '../../http/schemas.js';
import {
  CountSegmentBody,
  CreateSegmentBody,
  ListSegmentsQuery,
  RecipientIdQuery,
  RecipientListQuery,
  SegmentIdQuery,
  SegmentCount,
  SegmentList,
  SegmentRecipientList,
  StoreRecipientBody,
  UpdateSegmentBody,
} from './segments.schema.js';
import {
  addRecipient,
  countSegmentMatches,
  createSegment,
  deleteRecipient,
  deleteSegment,
  listSegmentRecipients,
  listSegments,
  updateSegment,
} from './segments.service.js';

/** `/segment/…` endpoints. */
export const segmentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/segment/list',
    {
      config: { scope: 'segments.read' },
      schema: { summary: 'List segments', querystring: ListSegmentsQuery, response: responses(SegmentList, 422) },
    },
    async (req, reply) => sendList(reply, 'segments', req.query, await listSegments(deps, req.userId)),
  );

  app.post(
    '/segment/create',
    {
      schema: { summary: 'Create a segment', body: CreateSegmentBody, response: responses(OkCreated, 422) },
      config: { scope: 'segments.write', deferValidation: true },
    },
    async (req) => {
      const id = await createSegment(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id });
    },
  );

  app.post(
    '/segment/update',
    {
      schema: { summary: 'Update a segment', body: UpdateSegmentBody, response: responses(OkText, 404, 422) },
      config: { scope: 'segments.write', deferValidation: true },
    },
    async (req) => {
      await updateSegment(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.post(
    '/segment/count',
    {
      schema: {
        summary: 'Count the contacts a segment definition matches',
        description:
          'Takes the fields of `/segment/create` without `segment_name`, checks them the same way, and answers how many live ' +
          'contacts of the contact type match the conditions now, without saving anything (a live count while a segment is built).',
        body: CountSegmentBody,
        response: responses(SegmentCount, 422),
      },
      config: { scope: 'segments.read', deferValidation: true },
    },
    async (req) => ok({ count: await countSegmentMatches(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.get(
    '/segment/email/list',
    {
      config: { scope: 'segments.read' },
      schema: {
        summary: "List a segment's recipients",
        querystring: RecipientListQuery,
        response: responses(SegmentRecipientList, 404, 422),
      },
    },
    async (req, reply) => sendList(reply, 'contactEmails', req.query, await listSegmentRecipients(deps, req.userId, req.query.segment_id)),
  );

  app.post(
    '/segment/email/store',
    {
      schema: { summary: 'Add a recipient to a segment by hand', body: StoreRecipientBody, response: responses(OkCreated, 422) },
      config: { scope: 'segments.write', deferValidation: true },
    },
    async (req) => {
      const id = await addRecipient(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id });
    },
  );

  app.delete(
    '/segment/email/delete',
    {
      config: { scope: 'segments.write' },
      schema: { summary: 'Delete a hand-added segment recipient', querystring: RecipientIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteRecipient(deps, req.userId, req.query.segment_recipient_id);
      return ok('Deleted Successfully');
    },
  );

  app.delete(
    '/segment/delete',
    {
      config: { scope: 'segments.write' },
      schema: { summary: 'Delete a segment', querystring: SegmentIdQuery, response: responses(OkInErrors, 404, 422) },
    },
    async (req) => {
      await deleteSegment(deps, req.userId, req.query.segment_id);
      return okInErrors('Deleted Successfully');
    },
  );
};
