import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE, SESSION_MAX_MS } from '../../http/auth.js';
import { fromAnotherSite } from '../../http/csrf.js';
import { ok } from '../../http/envelope.js';
import { AppError } from '../../http/errors.js';
import { OkText, responses } from '../../http/schemas.js';
import { AcceptInviteBody, ForgotBody, ResetBody } from './users.schema.js';
import { acceptInvite, forgotPassword, LINK_GONE, resetPassword, type RequestMeta } from './users.service.js';
import { publicResponses, SessionAnswer, SignInBody } from './sessions.schema.js';
import { currentPerson, sessionAnswer, signIn, signOut, WRONG_CREDENTIALS } from './sessions.service.js';

/** The 403 of a sign-in posted by a page of another site. */
export const CROSS_SITE_SIGN_IN = 'A sign-in from another site is refused.';

/** Where a request came from, for the audit log. */
export const metaOf = (request: FastifyRequest): RequestMeta => ({
  ip: request.ip ?? null,
  userAgent: request.headers['user-agent'] ?? null,
});

/** `/session…`: signing in and out, the signed-in person, invitations and password resets. */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;
  const cookieOptions = {
    httpOnly: true,
    sameSite: 'strict' as const,
    path: '/',
    secure: deps.config.publicUrl.startsWith('https:'),
  };
  const clearCookie = (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, cookieOptions);

  app.post(
    '/session/sign-in',
    {
      schema: {
        summary: 'Sign in',
        description:
          'Sets the session cookie `campaign_session` (HttpOnly, SameSite=Strict, Secure on https) and answers the person and the ' +
          'session’s CSRF token. A wrong email or password: 401 `' +
          WRONG_CREDENTIALS +
          '` (the same for both). With two-factor on and no `code`: 401 `Two-factor code required`; a wrong one: 401 ' +
          '`Invalid two-factor code`. 10 failures for one email from one client address within 15 minutes: 429 for that email ' +
          'from that address for 15 minutes; failures from elsewhere only slow the email to one attempt every 5 seconds (429 ' +
          'with `Retry-After`).',
        body: SignInBody,
        response: publicResponses(SessionAnswer, {
          401: 'Wrong email or password, or a two-factor code missing or wrong.',
          403: `Posted by a page of another site (\`Origin\` not the service's own, or \`Sec-Fetch-Site: cross-site\`): \`${CROSS_SITE_SIGN_IN}\`.`,
        }),
      },
      config: { public: true },
      // A page of another site must not sign the browser in (as its author, to read what the
      // victim then types into the console): login CSRF. The cookie's SameSite does not help here,
      // as there is no session yet.
      onRequest: async (req) => {
        if (fromAnotherSite(req, deps.config.publicUrl)) throw new AppError(403, CROSS_SITE_SIGN_IN);
      },
    },
    async (req, reply) => {
      const { cookie, ...answer } = await signIn(deps, req.body, req.cookies[SESSION_COOKIE], metaOf(req));
      reply.setCookie(SESSION_COOKIE, cookie, { ...cookieOptions, maxAge: SESSION_MAX_MS / 1000 });
      return ok(answer);
    },
  );

  app.get(
    '/session',
    {
      schema: {
        summary: 'The signed-in person',
        description:
          'With the session’s CSRF token, which a new browser tab (that cannot read the HttpOnly cookie) takes from here, the ' +
          'scopes of the person’s role and the account’s `require_two_factor`. 401 without a session.',
        response: responses(SessionAnswer),
      },
      config: { sessionOnly: true, beforeTwoFactor: true },
    },
    async (req) => ok(await sessionAnswer(deps, await currentPerson(deps, req.principal!), req.cookies[SESSION_COOKIE]!)),
  );

  app.post(
    '/session/sign-out',
    {
      schema: { summary: 'Sign out', description: 'Ends the session and clears its cookie.', response: responses(OkText) },
      config: { sessionOnly: true, beforeTwoFactor: true, ownAudit: true },
    },
    async (req, reply) => {
      await signOut(deps, req.principal!, metaOf(req));
      app.forgetCredentials();
      clearCookie(reply);
      return ok('Signed Out Successfully');
    },
  );

  app.post(
    '/session/accept-invite',
    {
      schema: {
        summary: 'Accept an invitation',
        description: 'With the token of the mailed link: the person sets a name and a password (at least 12 characters), then signs in.',
        body: AcceptInviteBody,
        response: publicResponses(OkText, { 410: `A used, expired or unknown link: \`${LINK_GONE}\`.` }),
      },
      config: { public: true },
    },
    async (req) => {
      await acceptInvite(deps, req.body, metaOf(req));
      return ok('Accepted Successfully');
    },
  );

  app.post(
    '/session/forgot',
    {
      schema: {
        summary: 'Ask for a password reset link',
        description: 'Always `Sent Successfully`; a person with that address gets a link valid 1 hour, once.',
        body: ForgotBody,
        response: publicResponses(OkText),
      },
      config: { public: true },
    },
    async (req) => {
      await forgotPassword(deps, req.body.email);
      return ok('Sent Successfully');
    },
  );

  app.post(
    '/session/reset',
    {
      schema: {
        summary: 'Set a new password through a reset link',
        description: 'Every session of the person ends.',
        body: ResetBody,
        response: publicResponses(OkText, { 410: `A used, expired or unknown link: \`${LINK_GONE}\`.` }),
      },
      config: { public: true },
    },
    async (req) => {
      await resetPassword(deps, req.body, metaOf(req));
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );
};
