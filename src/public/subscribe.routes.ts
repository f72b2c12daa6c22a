import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { ok } from '../http/envelope.js';
import { AppError, NotFound, Rnf, ValidationError } from '../http/errors.js';
import { schemaErrors } from '../http/error-handler.js';
import { FailedFields, FailedText, Media, OkText, Text } from '../http/schemas.js';
import { RESERVED_FIELDS } from '../reference/fields.js';
import { HONEYPOT } from '../modules/forms/forms.embed.js';
import type { Cap } from '../modules/forms/forms.limits.js';
import { confirmationOf, confirmSignUp, signUp, type Visitor } from '../modules/forms/forms.signup.js';
import { messagePage, sendPage } from './page.js';
import { checkInboxPage, confirmedPage, confirmPage, invalidPostPage } from './subscribe.page.js';

/** A response a browser gets as a page and a script as JSON (see `wantsJson`). */
const PageOrJson = (description: string, json: TSchema) =>
  Type.Unsafe<unknown>({ description, content: { 'application/json': { schema: json }, 'text/html': { schema: Type.String() } } });
const Html = (description: string) => Media('text/html', description);

const ACCEPTED = 'Check your inbox to confirm your subscription.';
/** What each cap on confirmation mails says when it is reached; `limitedMessage` adds when to retry. */
const LIMITED: Record<Cap, string> = {
  client: 'Too many sign-ups to this form from your network.',
  address: 'Too many sign-ups to this address.',
  domain: 'Too many sign-ups to addresses at this domain.',
  form: 'This form has taken too many sign-ups.',
};
const UNAVAILABLE = 'This form is not taking sign-ups at the moment.';

const postSchema = {
  summary: 'Sign up through a form (public)',
  description:
    'What an embedded sign-up form posts (urlencoded or multipart; JSON too). Stores a pending sign-up and mails a confirmation ' +
    'link from the form’s sender; nothing is subscribed until the link’s page is confirmed. A filled `website` (the hidden anti-bot ' +
    'field), an address that is unsubscribed from everything or suppressed, and the same address again within the hour get the same ' +
    'answer and no mail (`+tag` forms of an address count as the address). Confirmation mails are capped: per form 5 an hour from ' +
    'one IP (IPv6: one /64), 50 an hour to one domain and 200 an hour in all; 5 a day to one address across the account’s forms. ' +
    'The client IP is taken from `X-Forwarded-For` only as `TRUST_PROXY` allows. Answers a page, or the JSON ' +
    'envelope when the request is JSON or accepts only JSON. Any origin may read the answer (`Access-Control-Allow-Origin: *`).',
  params: Type.Object({ id: Type.String({ maxLength: 64, description: "The form's id." }) }),
  body: Type.Object(
    {
      ...Object.fromEntries(RESERVED_FIELDS.map((f) => [f.name, Type.Optional(Text())])),
      email: Type.Optional(Type.String({ maxLength: 254, description: 'The address signing up (required).' })),
      custom_field: Type.Optional(
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2000 }), {
          description: 'Custom fields the form asks for, as `custom_field[<name>]`.',
        }),
      ),
      [HONEYPOT]: Type.Optional(Type.String({ maxLength: 2000, description: 'The hidden anti-bot field: must stay empty.' })),
    },
    { description: 'The fields the form asks for; others are ignored.' },
  ),
  response: {
    200: PageOrJson('Accepted: check your inbox (also when nothing was mailed; the answer reveals nothing).', OkText),
    400: FailedText,
    404: PageOrJson('No such form (`Record not found`).', FailedText),
    409: PageOrJson('The form cannot take sign-ups now (its sender is no longer verified or its contact type was deleted).', FailedText),
    413: FailedText,
    415: FailedText,
    422: PageOrJson('A value could not be taken: every failing field with its messages.', FailedFields),
    429: PageOrJson(
      'A cap on confirmation mails is reached (this IP, this address, its domain or the form); `Retry-After` says when to retry.',
      FailedText,
    ),
  },
};

const tokenParams = Type.Object({ token: Type.String({ maxLength: 2048, description: 'The signed token from the confirmation mail.' }) });
const INVALID = Html('The link is not one of ours (forged or altered); nothing changed.');
const GONE = Html('The link has expired (after 7 days) or was already used; nothing changed.');

const getConfirmSchema = {
  summary: 'The confirmation page of a sign-up (public)',
  description:
    'Opened from the link in the confirmation mail: a page with a "Confirm subscription" button that posts to the same address. ' +
    'Opening it confirms nothing, since mail security scanners open links by themselves.',
  params: tokenParams,
  response: { 200: Html('The page with the button.'), 404: INVALID, 410: GONE },
};

const postConfirmSchema = {
  summary: 'Confirm a sign-up (public)',
  description:
    'The button of the confirmation page. Creates or updates the contact in the form’s contact type, takes the address off the ' +
    'form’s unsubscribe group, records the consent and writes `contact.subscribed`; then answers 303 to the form’s `redirect_url`, ' +
    'or a page. A link confirms once. An address unsubscribed from everything or suppressed since it signed up is refused.',
  params: tokenParams,
  response: {
    200: Html('Confirmed (the form names no page of its own).'),
    303: Type.Null({ description: "Confirmed: to the form's `redirect_url` (`Location`); no body." }),
    404: INVALID,
    409: Html('Refused: the address is unsubscribed from everything or suppressed; nothing changed.'),
    410: GONE,
  },
};

/** Whether to answer JSON: a JSON request, or one that accepts JSON and not HTML. */
function wantsJson(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '');
  return (
    String(req.headers['content-type'] ?? '').startsWith('application/json') ||
    (accept.includes('application/json') && !accept.includes('text/html'))
  );
}

/** When to retry, in words: `in 12 minutes`, `in 5 hours`. */
function limitedMessage(cap: Cap, seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  const hours = Math.ceil(seconds / 3600);
  const wait = minutes <= 90 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${hours} hours`;
  return `${LIMITED[cap]} Try again in ${wait}.`;
}

/**
 * Who is posting: `req.ip` is the socket's peer, or the client a trusted proxy names (TRUST_PROXY),
 * never what the client itself wrote. A trusted proxy's header that names no address (a hop count
 * larger than the proxies in front) is not taken either.
 */
function visitorOf(req: FastifyRequest): Visitor {
  const agent = req.headers['user-agent'];
  const ip = ipaddr.isValid(req.ip) ? req.ip : (req.socket.remoteAddress ?? '');
  return { ip, userAgent: typeof agent === 'string' ? agent.slice(0, 500) : null };
}

/**
 * `POST /subscribe/<form id>`, `GET` and `POST /subscribe/confirm/<token>`: the public side of
 * sign-up forms (docs/forms.md). No keys: the form's id and the signed token are all they take.
 * Not under the API's per-account rate limit; sign-ups have their own limits, kept in the database.
 */
export const subscribeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/subscribe/:id',
    {
      schema: postSchema,
      config: { public: true, deferValidation: true },
      // A page of any site may post the form and read the answer: no cookies, no credentials.
      onSend: async (_req, reply, payload) => {
        reply.header('Access-Control-Allow-Origin', '*');
        return payload;
      },
    },
    async (req, reply) => {
      const json = wantsJson(req);
      const outcome = await signUp(deps, req.params.id, (req.body ?? {}) as Record<string, unknown>, visitorOf(req), schemaErrors(req));
      switch (outcome.kind) {
        case 'accepted':
          return json ? ok(ACCEPTED) : sendPage(reply, 200, checkInboxPage());
        case 'not_found':
          if (json) throw new NotFound(Rnf);
          return sendPage(reply, 404, messagePage('Form not found', 'This sign-up form does not exist (any more).'));
        case 'unavailable':
          if (json) throw new AppError(409, UNAVAILABLE);
          return sendPage(reply, 409, messagePage('Sign-up unavailable', UNAVAILABLE));
        case 'invalid':
          if (json) throw new ValidationError(outcome.errors);
          return sendPage(reply, 422, invalidPostPage(outcome.errors));
        case 'limited': {
          const message = limitedMessage(outcome.cap, outcome.retryAfter);
          if (json) throw new AppError(429, message, { 'Retry-After': String(outcome.retryAfter) });
          reply.header('Retry-After', String(outcome.retryAfter));
          return sendPage(reply, 429, messagePage('Too many sign-ups', message));
        }
      }
    },
  );

  const invalid = (reply: FastifyReply) =>
    sendPage(
      reply,
      404,
      messagePage('Link not valid', 'This confirmation link is not valid. Use the link from the email exactly as it is.'),
    );
  const gone = (reply: FastifyReply) =>
    sendPage(
      reply,
      410,
      messagePage('Link expired', 'This confirmation link has expired or was already used. Sign up again to get a new one.'),
    );

  app.get(
    '/subscribe/confirm/:token',
    { schema: getConfirmSchema, config: { public: true, deferValidation: true } },
    async (req, reply) => {
      const outcome = await confirmationOf(deps, req.params.token);
      if (outcome.kind === 'ready') return sendPage(reply, 200, confirmPage(outcome.email));
      return outcome.kind === 'invalid' ? invalid(reply) : gone(reply);
    },
  );

  app.post(
    '/subscribe/confirm/:token',
    { schema: postConfirmSchema, config: { public: true, deferValidation: true } },
    async (req, reply) => {
      const outcome = await confirmSignUp(deps, req.params.token, visitorOf(req));
      switch (outcome.kind) {
        case 'confirmed':
          if (outcome.redirectUrl) return reply.redirect(outcome.redirectUrl, 303);
          return sendPage(reply, 200, confirmedPage(outcome.email));
        case 'refused':
          return sendPage(
            reply,
            409,
            messagePage(
              'Cannot subscribe',
              'This address has asked to receive no emails from this sender, or cannot receive them. Nothing changed.',
            ),
          );
        case 'invalid':
          return invalid(reply);
        default:
          return gone(reply);
      }
    },
  );
};
