import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { escapeHtml } from '../delivery/placeholders.js';
import { FailedFields, Media } from '../http/schemas.js';
import { verifySenderByToken } from '../modules/senders/senders.service.js';
import { messagePage, plainPage, sendPage } from './page.js';

const schema = {
  summary: 'Verify a sender (the link in the verification mail)',
  description: "Opened in a browser from the mail sent to the sender's address; answers a small HTML page.",
  querystring: Type.Object({ token: Type.Optional(Type.String({ description: 'The signed token from the mail.' })) }),
  response: {
    200: Media('text/html', 'The sender is verified.'),
    400: Media('text/html', 'The link is invalid or has expired.'),
    404: Media('text/html', 'The sender was deleted or its address changed since the mail was sent.'),
    422: FailedFields,
  },
};

/**
 * `GET /sender/verify?token=…`: the link mailed to a sender's address. Public: the signed token is
 * the credential. A forged, altered or expired token, or a sender deleted or re-addressed since,
 * verifies nothing and says so (400 / 404).
 */
export const senderVerifyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The link verifies on GET (it is opened from a mail); no implicit HEAD route, so the HEAD a mail
  // scanner or link checker sends verifies nothing.
  app.get('/sender/verify', { schema, exposeHeadRoute: false, config: { public: true } }, async (req, reply) => {
    const token = req.query.token;
    const outcome = await verifySenderByToken(app.deps, token);
    if (!outcome.ok) {
      const text =
        outcome.reason === 'invalid'
          ? 'This verification link is invalid or has expired. Ask for a new verification mail.'
          : 'This verification link is no longer valid: the sender was deleted or its address has changed.';
      return sendPage(reply, outcome.reason === 'invalid' ? 400 : 404, messagePage('Invalid verification link', text));
    }
    const s = outcome.sender;
    return sendPage(
      reply,
      200,
      plainPage(
        'Sender verified',
        `<p><b>${escapeHtml(s.from_name)}</b> &lt;${escapeHtml(s.from_email)}&gt; is now a verified sender and can be used for campaigns.</p>`,
      ),
    );
  });
};
