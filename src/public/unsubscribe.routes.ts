import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { trackingLinks } from '../delivery/tracking.js';
import { Id, Media } from '../http/schemas.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { findMessageSenderName, findPublicMessage, type PublicMessage } from './messages.queries.js';
import { applyPreferences, preferencesOf, unsubscribeOneClick } from './preferences.service.js';
import { messagePage, sendPage } from './page.js';
import { preferencesPage } from './unsubscribe.page.js';

const Html = (description: string) => Media('text/html', description);
const params = Type.Object({ token: Type.String({ maxLength: 2048, description: 'The signed unsubscribe token from the mail.' }) });
const INVALID = Html('The link is invalid (forged or altered) or its message no longer exists; nothing changed.');

const getSchema = {
  summary: 'The unsubscribe preferences page of a mail',
  description:
    "Opened from the unsubscribe link of a mail: the address's state on the account's global unsubscribe list and on every " +
    'unsubscribe group shown on preferences pages (and the group the mail was sent under), as a form, naming the sender the ' +
    "mail came from (its campaign's sender name, else the sender's from name). Changes nothing.",
  params,
  response: { 200: Html('The preferences page.'), 404: INVALID },
};

const postSchema = {
  summary: 'One-click unsubscribe (RFC 8058), or save the preferences page',
  description:
    "With `List-Unsubscribe=One-Click` (what mail providers send for the mail's `List-Unsubscribe-Post` header): the address " +
    "joins the list of the group the mail was sent under. With `preferences=1` (the page's form): each offered list ends in " +
    'the chosen state, `global=1` for the global list and `groups` for the groups (a list left out is re-subscribed). ' +
    "Idempotent; no redirect, no cookies. The first unsubscribe through a mail counts once in its send's `unsubscribes`.",
  params,
  body: Type.Object({
    'List-Unsubscribe': Type.Optional(Type.Literal('One-Click', { description: 'RFC 8058 one-click unsubscribe.' })),
    preferences: Type.Optional(Type.Literal('1', { description: 'The preferences form is being saved.' })),
    global: Type.Optional(Type.Literal('1', { description: 'With `preferences`: on the global unsubscribe list.' })),
    groups: Type.Optional(
      Type.Array(Id, { maxItems: 1000, description: 'With `preferences`: the ids of the groups to be unsubscribed from.' }),
    ),
  }),
  response: {
    200: Html('Done: a short confirmation, or the page again with its saved state.'),
    400: Html('The form could not be read (neither a one-click nor a preferences body, or a group not offered); nothing changed.'),
    404: INVALID,
  },
};

const invalid = (reply: FastifyReply) =>
  sendPage(
    reply,
    404,
    messagePage('Link not valid', 'This unsubscribe link is not valid. Use the link from the most recent email you received.'),
  );
const unreadable = (reply: FastifyReply) =>
  sendPage(
    reply,
    400,
    messagePage('Nothing changed', 'Your choice could not be read. Open the link from your email again and save your preferences.'),
  );

/**
 * `GET /u/<token>` and `POST /u/<token>`: the link in every mail's footer and `List-Unsubscribe`
 * header. Public; the signed token, naming one message, is the credential, and only that
 * message's address can be changed through it. GET never changes anything (mail scanners follow
 * links); POST is idempotent. Not rate-limited: each request costs an HMAC and, for a genuine
 * token, a few indexed statements on one address.
 */
export const unsubscribePageRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds }> = async (app, { kinds }) => {
  const links = trackingLinks(app.deps.config);
  const db = app.deps.database.db;

  async function messageOf(token: string): Promise<PublicMessage | undefined> {
    const id = links.readUnsubscribeToken(token);
    return id === null ? undefined : findPublicMessage(db, kinds, id);
  }

  app.get('/u/:token', { schema: getSchema, config: { public: true, deferValidation: true } }, async (req, reply) => {
    const message = await messageOf(req.params.token);
    if (!message) return invalid(reply);
    const [prefs, sender] = await Promise.all([preferencesOf(db, message), findMessageSenderName(db, message)]);
    return sendPage(reply, 200, preferencesPage({ email: message.email, sender, ...prefs }));
  });

  app.post('/u/:token', { schema: postSchema, config: { public: true, deferValidation: true } }, async (req, reply) => {
    const message = await messageOf(req.params.token);
    if (!message) return invalid(reply);
    if (req.validationError) return unreadable(reply);
    const body = req.body;
    if (body['List-Unsubscribe'] === 'One-Click') {
      await unsubscribeOneClick(app.deps, kinds, message);
      const sender = (await findMessageSenderName(db, message)) ?? 'this sender';
      const what = message.groupId === null ? `all emails from ${sender}` : 'this kind of email';
      return sendPage(reply, 200, messagePage('Unsubscribed', `${message.email} is unsubscribed from ${what}.`));
    }
    if (body.preferences !== '1') return unreadable(reply);
    const saved = await applyPreferences(app.deps, kinds, message, { global: body.global === '1', groupIds: body.groups ?? [] });
    if (!saved) return unreadable(reply);
    const [prefs, sender] = await Promise.all([preferencesOf(db, message), findMessageSenderName(db, message)]);
    return sendPage(reply, 200, preferencesPage({ email: message.email, sender, ...prefs, notice: 'Your preferences are saved.' }));
  });
};
