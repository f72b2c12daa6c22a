import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { OkText, responses, toId } from '../../http/schemas.js';
import { CreateKeyBody, KeyCreated, KeyIdQuery, KeyList, ListKeysQuery, UpdateKeyBody } from './keys.schema.js';
import { createKey, deleteKey, listKeys, updateKey } from './keys.service.js';

/** `/keys…`: the account's API keys, each named and scoped, revocable at once. */
export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/keys',
    {
      schema: { summary: 'List API keys', querystring: ListKeysQuery, response: responses(KeyList, 422) },
      config: { scope: 'keys.read' },
    },
    (req, reply) => sendList(reply, 'keys', req.query, listKeys(deps, req.userId)),
  );

  app.post(
    '/keys/create',
    {
      schema: {
        summary: 'Create an API key',
        description:
          'The answer holds the secret, shown only this once. A key may not hold a scope its maker lacks (403 naming it); ' +
          '`full` only an owner or a `full` key can give.',
        body: CreateKeyBody,
        response: responses(KeyCreated, 422),
      },
      config: { scope: 'keys.write' },
    },
    async (req) => ok(await createKey(deps, req.principal!, req.body)),
  );

  app.post(
    '/keys/update',
    {
      schema: {
        summary: 'Rename an API key or change its scopes',
        description: 'Takes effect on the key’s next request.',
        body: UpdateKeyBody,
        response: responses(OkText, 404, 422),
      },
      config: { scope: 'keys.write' },
    },
    async (req) => {
      await updateKey(deps, req.principal!, req.body);
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/keys/delete',
    {
      schema: {
        summary: 'Revoke an API key',
        description: 'At once: the key’s very next request is refused (401 `Invalid API credentials`).',
        querystring: KeyIdQuery,
        response: responses(OkText, 404),
      },
      config: { scope: 'keys.write' },
    },
    async (req) => {
      await deleteKey(deps, req.userId, toId(req.query.id));
      app.forgetCredentials();
      return ok('Deleted Successfully');
    },
  );
};
