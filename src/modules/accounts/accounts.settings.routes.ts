import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { OkText, responses } from '../../http/schemas.js';
import { SettingsAnswer, SunsetPreviewAnswer, SunsetPreviewQuery, UpdateSettingsBody } from './accounts.settings.schema.js';
import { getSettings, sunsetPreview, updateSettings } from './accounts.settings.js';

/** `/account/settings`, `/account/settings/update`, `/account/sunset-preview`: the account's settings (the sunset policy, two-factor required). */
export const accountSettingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/account/settings',
    { config: { scope: 'settings.read' }, schema: { summary: 'Show the account settings', response: responses(SettingsAnswer) } },
    async (req) => ok({ settings: await getSettings(deps, req.userId) }),
  );

  app.post(
    '/account/settings/update',
    {
      config: { scope: 'settings.write' },
      schema: {
        summary: 'Update the account settings',
        description:
          'Changes the settings given and keeps the others. Saving the sunset policy updates the suppression list at once: ' +
          'switched on, the inactive addresses are listed in `GET /suppressions` (reason `inactive`) and no longer get sends or ' +
          'automation emails; switched off, they leave it. `require_two_factor` only an owner (or a `full` key) may change (403 ' +
          'otherwise); once on, people without two-factor authentication can only set it up.',
        body: UpdateSettingsBody,
        response: responses(OkText, 422),
      },
    },
    async (req) => {
      await updateSettings(deps, req.principal!, req.body);
      app.forgetCredentials();
      return ok('Updated Successfully');
    },
  );

  app.get(
    '/account/sunset-preview',
    {
      config: { scope: 'settings.read' },
      schema: {
        summary: 'Preview the sunset policy',
        description:
          'How many addresses the sunset policy would list as inactive now, and up to 20 of them, with the `sunset_days` and ' +
          '`sunset_min_messages` of the query (each missing one is the saved value), whether or not the policy is on. ' +
          'Addresses already suppressed for another reason are not counted. `sample` is empty for a caller without `contacts.read`.',
        querystring: SunsetPreviewQuery,
        response: responses(SunsetPreviewAnswer, 422),
      },
    },
    async (req) => ok(await sunsetPreview(deps, req.principal!, req.query)),
  );
};
