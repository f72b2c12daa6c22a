import { Type } from '@sinclair/typebox';
import { Int, Success } from '../../http/schemas.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Rate = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

/** `GET /account/overview`: how many days back, today included. */
export const OverviewQuery = Type.Object({
  days: Type.Optional(Int({ minimum: 1, maximum: 365, description: 'Days back, today (UTC) included; default 30.' })),
});

export const OverviewAnswer = Success(
  Type.Object({
    overview: Type.Object({
      days: Type.Integer({ minimum: 1 }),
      since: Type.String({ description: 'Start of the window: midnight UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.' }),
      single_sends: Count('Single sends with messages queued in the window.'),
      sent: Count('Messages of single sends and automations queued in the window (test sends and service mail excluded).'),
      delivered: Count('Of those, messages the receiving server accepted and that did not bounce later.'),
      unique_opens: Count('Of those, messages opened at least once.'),
      unique_clicks: Count("Of those, messages with at least one tracked click by a person (scanners' clicks are in `bot_clicks`)."),
      unique_human_opens: Count(
        "Of those, messages a person opened (an open that is not a machine's, or a person's click); see docs/engagement.md.",
      ),
      machine_opens: Count("Opens of those messages by machines (Apple Mail Privacy Protection's proxy, prefetching agents)."),
      bot_clicks: Count('Clicks on those messages by scanners (security gateways, link checkers).'),
      open_rate: Rate('`unique_opens` ÷ `delivered` (0 when nothing was delivered).'),
      click_rate: Rate('`unique_clicks` ÷ `delivered` (0 when nothing was delivered).'),
      bounces: Count('Of those, messages that bounced (hard or soft).'),
      complaints: Count('Of those, messages reported as spam.'),
      unsubscribes: Count('Of those, messages through which the recipient unsubscribed.'),
      daily: Type.Array(
        Type.Object({
          day: Type.String({ description: 'The UTC day, `YYYY-MM-DD`.' }),
          delivered: Count('Messages delivered that day.'),
          opens: Count('Opens that day (total, not unique).'),
          clicks: Count('Clicks that day (total, not unique).'),
        }),
        { description: 'Every day of the window, oldest first, zeros included: the events of that day, whenever their message was sent.' },
      ),
      in_progress: Type.Array(
        Type.Object({
          utr: Type.String(),
          single_send_name: Type.String(),
          messages: Count('Its messages queued so far.'),
          done: Count('Of those, the ones delivery is done with (sent, bounced, suppressed or cancelled).'),
        }),
        { description: 'The single sends running now (status 2), oldest first.' },
      ),
    }),
  }),
  "The account's campaign figures.",
);
