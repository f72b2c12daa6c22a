import { Type, type Static } from '@sinclair/typebox';
import { Int, Success } from '../../http/schemas.js';
import { SUNSET_DEFAULTS, SUNSET_RANGES } from '../../suppression/sunset.rule.js';

const { sunset_days: DAYS, sunset_min_messages: MIN } = SUNSET_RANGES;

const SunsetDays = Int({
  ...DAYS,
  description: `How long without a person's open or click makes an address inactive, in days (${DAYS.minimum}–${DAYS.maximum}; default ${SUNSET_DEFAULTS.sunset_days}).`,
});
const SunsetMinMessages = Int({
  ...MIN,
  description: `How many messages an address must have received before it can be inactive (${MIN.minimum}–${MIN.maximum}; default ${SUNSET_DEFAULTS.sunset_min_messages}).`,
});

/** `POST /account/settings/update`: only the settings given change. */
export const UpdateSettingsBody = Type.Object({
  sunset_enabled: Type.Optional(
    Int({
      minimum: 0,
      maximum: 1,
      description: '1 turns the sunset policy on: inactive addresses are suppressed (reason `inactive`); 0 (default) turns it off.',
    }),
  ),
  sunset_days: Type.Optional(SunsetDays),
  sunset_min_messages: Type.Optional(SunsetMinMessages),
  require_two_factor: Type.Optional(
    Int({
      minimum: 0,
      maximum: 1,
      description: '1 keeps people without two-factor authentication out of everything but setting it up; owners (and `full` keys) only.',
    }),
  ),
});
export type UpdateSettingsInput = Static<typeof UpdateSettingsBody>;

/** `GET /account/sunset-preview`: the values to preview; each missing one is the saved one. */
export const SunsetPreviewQuery = Type.Object({
  sunset_days: Type.Optional(SunsetDays),
  sunset_min_messages: Type.Optional(SunsetMinMessages),
});
export type SunsetPreviewInput = Static<typeof SunsetPreviewQuery>;

/** The account's settings as the API shows them. */
export const SettingsShape = Type.Object(
  {
    sunset_enabled: Type.Integer({ minimum: 0, maximum: 1, description: '1: the sunset policy is on.' }),
    sunset_days: Type.Integer({ ...DAYS, description: "Days without a person's open or click after which an address is inactive." }),
    sunset_min_messages: Type.Integer({ ...MIN, description: 'Messages an address must have received before it can be inactive.' }),
    require_two_factor: Type.Integer({ minimum: 0, maximum: 1, description: '1: people without two-factor authentication are kept out.' }),
  },
  { description: 'The account settings (the defaults until saved).' },
);
export type Settings = Static<typeof SettingsShape>;

export const SettingsAnswer = Success(Type.Object({ settings: SettingsShape }), { description: "The account's settings." });

export const SunsetPreviewAnswer = Success(
  Type.Object({
    count: Type.Integer({ minimum: 0, description: 'How many addresses the policy with these values would list as inactive now.' }),
    sample: Type.Array(Type.String(), {
      maxItems: 20,
      description: 'Up to 20 of them, in address order; empty for a caller without `contacts.read`.',
    }),
  }),
  { description: 'What the sunset policy would suppress now, whether or not it is on.' },
);
