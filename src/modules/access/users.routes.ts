import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { OkCreated, OkText, responses, toId } from '../../http/schemas.js';
import { InviteBody, ListUsersQuery, UpdateUserBody, UserIdQuery, UserList } from './users.schema.js';
import { deleteUser, inviteUser, LAST_OWNER, listUsers, ONLY_OWNERS, updateUserRole } from './users.service.js';

const OWNER_RULES =
  `Only an owner (or a \`full\` key) can make or remove an owner (403 \`${ONLY_OWNERS}\`); an account keeps at least one owner (409 \`${LAST_OWNER}\`). ` +
  'Giving a role needs every scope of that role (403 naming the first one the caller lacks).';

/** `/users…`: the people of the account and their roles. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/users',
    {
      schema: { summary: 'List people', querystring: ListUsersQuery, response: responses(UserList, 422) },
      config: { scope: 'users.read' },
    },
    (req, reply) => sendList(reply, 'users', req.query, listUsers(deps, req.userId)),
  );

  app.post(
    '/users/invite',
    {
      schema: {
        summary: 'Invite a person',
        description:
          'Mails a link `{PUBLIC_URL}/app/invite/<token>`, valid 7 days and once, where the person sets a name and a password ' +
          "(`POST /session/accept-invite`). An address belongs to one person: an address of another account's person is answered " +
          'as a fresh one, and mailed, without a link, what happened; an address this account has already: 422. ' +
          OWNER_RULES,
        body: InviteBody,
        response: responses(OkCreated, 422),
      },
      config: { scope: 'users.write' },
    },
    async (req) => ok('Invited Successfully', { id: await inviteUser(deps, req.principal!, req.body) }),
  );

  app.post(
    '/users/update',
    {
      schema: {
        summary: "Change a person's role",
        description: 'Counts from their next request. ' + OWNER_RULES,
        body: UpdateUserBody,
        response: responses(OkText, 404, 409, 422),
      },
      config: { scope: 'users.write' },
    },
    async (req) => {
      await updateUserRole(deps, req.principal!, req.body);
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/users/delete',
    {
      schema: {
        summary: 'Remove a person',
        description: 'Their sessions end at once. ' + OWNER_RULES,
        querystring: UserIdQuery,
        response: responses(OkText, 404, 409),
      },
      config: { scope: 'users.write' },
    },
    async (req) => {
      await deleteUser(deps, req.principal!, toId(req.query.id));
      app.forgetCredentials();
      return ok('Deleted Successfully');
    },
  );
};
