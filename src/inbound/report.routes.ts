import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../deps.js';
import { ok } from '../http/envelope.js';
import { Email, Enum, OkText, responses } from '../http/schemas.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { takeInEvent } from './intake.js';

/** `POST /bounces/report`: a bounce or complaint the caller learnt of (by its relay, its own mail). */
export const ReportBody = Type.Object({
  email: Email,
  type: Enum(['hard', 'soft', 'complaint'] as const),
  reason: Type.Optional(
    Type.String({ maxLength: 1000, description: "The server's answer or the report's text; kept as the suppression's detail." }),
  ),
  message_id: Type.Optional(
    Type.String({
      maxLength: 998,
      description: 'The original `Message-ID` (with or without angle brackets): the event is matched to that message of the account.',
    }),
  ),
});

/**
 * Takes in a bounce or complaint reported by the caller: with `message_id`, matched to that
 * message of the caller's account (another account's message, or none: nothing changes); without,
 * applied to the address within the caller's account only, counted on no message.
 */
export async function reportBounce(
  deps: AppDeps,
  kinds: MailKinds,
  userId: number,
  input: { email: string; type: 'hard' | 'soft' | 'complaint'; reason?: string; message_id?: string },
): Promise<void> {
  const type = input.type === 'complaint' ? null : input.type;
  await takeInEvent(
    deps,
    kinds,
    {
      source: 'report',
      kind: type === null ? 'complaint' : 'bounce',
      type,
      email: input.email,
      messageId: input.message_id ?? null,
      reason: input.reason ?? null,
    },
    { userId },
  );
}

/** `POST /bounces/report` (keys): a bounce or complaint the caller learnt of, taken in like any other. */
export const reportRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds }> = async (app, { kinds }) => {
  const { deps } = app;

  app.post(
    '/bounces/report',
    {
      schema: {
        summary: 'Report a bounce or spam complaint',
        description:
          'With `message_id`, matched to that message of the account (counted once on it); without, applied to the address in the account only. ' +
          'Hard: the address is suppressed; soft: suppressed at 3 soft bounces within 30 days; complaint: globally unsubscribed and suppressed.',
        body: ReportBody,
        response: responses(OkText, 422),
      },
    },
    async (req) => {
      await reportBounce(deps, kinds, req.userId, req.body);
      return ok('Recorded Successfully');
    },
  );
};
