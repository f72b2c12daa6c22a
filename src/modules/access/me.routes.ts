import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { OkText, responses, Success } from '../../http/schemas.js';
import { Secret } from '../../http/secret-fields.js';
import { MAX_PASSWORD } from './sessions.passwords.js';
import { NewPassword } from './users.schema.js';
import { changePassword, disableTwoFactor, enableTwoFactor, setupTwoFactor, SIGN_IN_AGAIN } from './me.service.js';

const Code = Type.String({ minLength: 1, maxLength: 64, description: 'A code of the authenticator app (6 digits).' });
const Password = Type.String({ minLength: 1, maxLength: MAX_PASSWORD });

/** `/me/…`: the signed-in person's own password and two-factor authentication (a session only). */
export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/me/2fa/setup',
    {
      schema: {
        summary: 'Set up two-factor authentication',
        description:
          'A new TOTP secret (SHA-1, 30 s, 6 digits; unpadded base32) and its `otpauth://` URL for an authenticator app (a QR code). ' +
          'It counts once a code of it is given to `POST /me/2fa/enable`. 409 when two-factor is on already.',
        response: responses(
          Success(
            Type.Object({ secret: Secret(Type.String()), otpauth_url: Secret(Type.String()) }),
            'The secret, shown only in this answer.',
          ),
          409,
        ),
      },
      config: { sessionOnly: true, beforeTwoFactor: true },
    },
    async (req) => ok(await setupTwoFactor(deps, req.principal!)),
  );

  app.post(
    '/me/2fa/enable',
    {
      schema: {
        summary: 'Turn two-factor authentication on',
        description:
          'With a code of the secret set up. Answers ten recovery codes, shown only this once, each usable once in place of a code. ' +
          `Only within 10 minutes of signing in (403 \`${SIGN_IN_AGAIN}\`), so a session stolen later cannot turn it on with an app of its own.`,
        body: Type.Object({ code: Code }),
        response: responses(
          Success(
            Type.Object({ recovery_codes: Secret(Type.Array(Type.String(), { minItems: 10, maxItems: 10 })) }),
            'The recovery codes.',
          ),
          409,
          422,
        ),
      },
      config: { sessionOnly: true, beforeTwoFactor: true },
    },
    async (req) => {
      const answer = await enableTwoFactor(deps, req.principal!, req.body.code);
      app.forgetCredentials();
      return ok(answer);
    },
  );

  app.post(
    '/me/2fa/disable',
    {
      schema: {
        summary: 'Turn two-factor authentication off',
        description:
          'With the password and a code (or a recovery code). A wrong one counts as a failed sign-in, under the same lock (429).',
        body: Type.Object({ password: Password, code: Code }),
        response: responses(OkText, 409, 422),
      },
      config: { sessionOnly: true },
    },
    async (req) => {
      await disableTwoFactor(deps, req.principal!, req.body, req.ip);
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );

  app.post(
    '/me/password',
    {
      schema: {
        summary: 'Change the password',
        description:
          'With the current one; the new one has at least 12 characters. Every other session of the person ends. A wrong ' +
          'current password counts as a failed sign-in, under the same lock (429).',
        body: Type.Object({ current_password: Password, password: NewPassword }),
        response: responses(OkText, 422),
      },
      config: { sessionOnly: true },
    },
    async (req) => {
      await changePassword(deps, req.principal!, req.body, req.ip);
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );
};
