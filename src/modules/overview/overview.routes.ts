import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { responses } from '../../http/schemas.js';
import { OverviewAnswer, OverviewQuery } from './overview.schema.js';
import { accountOverview } from './overview.service.js';

/** `GET /account/overview`: the figures the console's first page shows. */
export const overviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/account/overview',
    {
      config: { scope: 'settings.read' },
      schema: {
        summary: "The account's campaign figures of the last days",
        description:
          'The messages of single sends and automations queued in the last `days` UTC days (today included) and what became of ' +
          'them (delivered, opened, clicked, bounced, reported as spam, unsubscribed), the delivered messages, opens and clicks ' +
          'of each day, and the single sends running now with their progress.',
        querystring: OverviewQuery,
        response: responses(OverviewAnswer, 422),
      },
    },
    async (req) => ok({ overview: await accountOverview(app.deps, req.userId, req.query.days ?? 30) }),
  );
};
