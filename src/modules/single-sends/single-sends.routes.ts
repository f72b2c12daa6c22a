import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkText, responses, StrUtrs } from '../../http/schemas.js';
import {
  CreateSingleSendBody,
  DuplicatedAnswer,
  ListSingleSendsQuery,
  RecipientsCountAnswer,
  SingleSendDetails,
  SingleSendList,
  UpdateSingleSendBody,
  UtrAnswer,
  UtrQuery,
} from './single-sends.schema.js';
import { AbWinnerAnswer, AbWinnerBody, SendStatsAnswer } from './ab-tests.schema.js';
import {
  countSingleSendRecipients,
  createSingleSend,
  deleteSingleSends,
  duplicateSingleSend,
  getSingleSend,
  getSingleSendStats,
  listSingleSends,
  pickAbWinner,
  updateSingleSend,
} from './single-sends.service.js';

/** `/single-send/…` and `/single/send/…` endpoints: every one names a send by its `utr`. */
export const singleSendRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/single-send/list',
    {
      config: { scope: 'sends.read' },
      schema: {
        summary: 'List single sends',
        querystring: ListSingleSendsQuery,
        response: responses(SingleSendList, 422),
      },
    },
    (req, reply) => sendList(reply, 'singleSends', req.query, listSingleSends(deps, req.userId)),
  );

  app.post(
    '/single/send/create',
    {
      schema: {
        summary: 'Create a single send',
        description:
          'The send is ready (status 1): it starts at once, or at `schedule_date` `schedule_time` (UTC, or in `timezone`). ' +
          'With `draft` 1 it is saved as a draft (status 0) instead: nothing is queued until an update with `draft` 0.',
        body: CreateSingleSendBody,
        response: responses(UtrAnswer, 422),
      },
      config: { scope: 'sends.write', deferValidation: true },
    },
    async (req) =>
      ok({
        utr: await createSingleSend(deps, req.userId, req.body, schemaErrors(req)),
      }),
  );

  // Clients call duplicate with POST or with GET: both work.
  app.route({
    config: { scope: 'sends.write', action: true },
    method: ['GET', 'POST'],
    url: '/single/send/duplicate',
    // A GET that changes state: no implicit HEAD route, so a HEAD (a prefetcher, a link checker) changes nothing.
    exposeHeadRoute: false,
    schema: {
      summary: 'Duplicate a single send (as a draft)',
      querystring: UtrQuery,
      response: responses(DuplicatedAnswer, 404, 422),
    },
    handler: async (req) => ok('Duplicated Successfully', await duplicateSingleSend(deps, req.userId, req.query.utr)),
  });

  app.get(
    '/single-send/details',
    {
      config: { scope: 'sends.read' },
      schema: {
        summary: 'View a single send',
        querystring: UtrQuery,
        response: responses(SingleSendDetails, 404, 422),
      },
    },
    async (req) =>
      ok({
        singleSend: [await getSingleSend(deps, req.userId, req.query.utr)],
      }),
  );

  app.get(
    '/single-send/stats',
    {
      config: { scope: 'sends.read' },
      schema: {
        summary: "A single send's detailed statistics",
        description:
          'Its counters (as in details, with hard and soft bounces, clicks and spam reports), every tracked link with its clicks, ' +
          'per UTC hour the messages delivered, opens and clicks, and the opens by people, machine opens and scanner clicks ' +
          "(docs/engagement.md); an A/B test's variants with the figures of their test share and the winner marked (docs/ab-tests.md). " +
          'Not found: `Record not found`.',
        querystring: UtrQuery,
        response: responses(SendStatsAnswer, 404, 422),
      },
    },
    async (req) => ok({ stats: await getSingleSendStats(deps, req.userId, req.query.utr) }),
  );

  app.get(
    '/single-send/recipients-count',
    {
      config: { scope: 'sends.read' },
      schema: {
        summary: 'Count the recipients of a single send',
        description:
          'How many addresses the send would go to if it started now, decided exactly as when it starts: the union of its targets, ' +
          'minus the excluded targets, global and group unsubscribes, suppressed addresses and deleted contacts, each address once. ' +
          'Not found: `Record not found`.',
        querystring: UtrQuery,
        response: responses(RecipientsCountAnswer, 404, 422),
      },
    },
    async (req) => ok({ count: await countSingleSendRecipients(deps, req.userId, req.query.utr) }),
  );

  app.post(
    '/single/send/update',
    {
      schema: {
        summary: 'Update a single send',
        description:
          'Only a draft (0) or ready (1) send can change; it is then ready for its new time, or a draft again with `draft` 1. ' +
          'A running or completed send answers 409.',
        body: UpdateSingleSendBody,
        response: responses(UtrAnswer, 404, 409, 422),
      },
      config: { scope: 'sends.write', deferValidation: true },
    },
    async (req) =>
      ok({
        utr: await updateSingleSend(deps, req.userId, req.body, schemaErrors(req)),
      }),
  );

  app.post(
    '/single/send/ab-winner',
    {
      config: { scope: 'sends.write' },
      schema: {
        summary: "Pick an A/B test's winner by hand",
        description:
          'While the test waits for its winner (from the start of the send until a winner is chosen), `variant` wins: its mail goes ' +
          'at once to every recipient not in the test share, resolved at this moment (docs/ab-tests.md). Not found: `Record not found`. ' +
          '409 when the send has no A/B test, has not started, or its winner was already chosen; 422 when `variant` is not one of its variants.',
        body: AbWinnerBody,
        response: responses(AbWinnerAnswer, 404, 409, 422),
      },
    },
    async (req) => ok(await pickAbWinner(deps, req.userId, req.body)),
  );

  app.delete(
    '/single/send/delete',
    {
      config: { scope: 'sends.write' },
      schema: {
        summary: 'Delete a single send',
        description: 'A running send is cancelled: the messages not yet sent are not sent.',
        querystring: UtrQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteSingleSends(deps, req.userId, [req.query.utr]);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/single/send/bulk-delete',
    {
      config: { scope: 'sends.write' },
      schema: {
        summary: 'Delete several single sends',
        description: '`strIds` holds utrs. Unknown ones are ignored; 404 only when none was deleted. Running sends are cancelled.',
        body: StrUtrs,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteSingleSends(deps, req.userId, req.body.strIds);
      return ok('Deleted Successfully');
    },
  );
};
