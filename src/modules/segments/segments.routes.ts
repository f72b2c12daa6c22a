import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import {
  CreateSegmentBody,
  ListSegmentsQuery,
  RecipientIdQuery,
  RecipientListQuery,
  SegmentIdQuery,
  StoreRecipientBody,
  UpdateSegmentBody,
} from './segments.schema.js';
import { addRecipient, createSegment, deleteRecipient, deleteSegment, recipientList, segmentList, updateSegment } from './segments.service.js';

/** `/segment/…` endpoints. */
export const segmentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/segment/list', { schema: { querystring: ListSegmentsQuery } }, (req, reply) =>
    sendList(reply, 'segments', req.query, segmentList(db, req.userId)),
  );

  app.post('/segment/create', { schema: { body: CreateSegmentBody }, config: { deferValidation: true } }, async (req) => {
    const id = await createSegment(db, req.userId, req.body, schemaErrors(req));
    return ok('Added Successfully', { id });
  });

  app.post('/segment/update', { schema: { body: UpdateSegmentBody }, config: { deferValidation: true } }, async (req) => {
    await updateSegment(db, req.userId, req.body, schemaErrors(req));
    return ok('Updated Successfully');
  });

  app.get('/segment/email/list', { schema: { querystring: RecipientListQuery } }, async (req, reply) =>
    sendList(reply, 'contactEmails', req.query, await recipientList(db, req.userId, req.query.segment_id)),
  );

  app.post('/segment/email/store', { schema: { body: StoreRecipientBody }, config: { deferValidation: true } }, async (req) => {
    const id = await addRecipient(db, req.userId, req.body, schemaErrors(req));
    return ok('Added Successfully', { id });
  });

  app.delete('/segment/email/delete', { schema: { querystring: RecipientIdQuery } }, async (req) => {
    await deleteRecipient(db, req.userId, req.query.segment_recipient_id);
    return ok('Deleted Successfully');
  });

  app.delete('/segment/delete', { schema: { querystring: SegmentIdQuery } }, async (req) => {
    await deleteSegment(db, req.userId, req.query.segment_id);
    return okInErrors('Deleted Successfully');
  });
};
