import { Type } from '@sinclair/typebox';
import { Int, Success } from '../../http/schemas.js';

/** `GET /outbox`: how many of the newest mails. */
export const OutboxQuery = Type.Object({
  limit: Type.Optional(Int({ minimum: 1, maximum: 50, description: 'How many of the newest mails; default 10.' })),
});

export const OutboxAnswer = Success(
  Type.Object({
    mode: Type.Union([Type.Literal('outbox'), Type.Literal('smtp')], {
      description:
        '`outbox`: no `SMTP_URL` is set, so mail is written to files in the outbox folder and reaches nobody; `smtp`: mail goes out.',
    }),
    folder: Type.Union([Type.String(), Type.Null()], { description: 'The outbox folder on the server (null in `smtp` mode).' }),
    mails: Type.Array(
      Type.Object({
        id: Type.Integer({ description: "The message's id." }),
        kind: Type.String({
          description: 'What queued it: `single_send`, `automation`, `test`, `system` (sender verification, notifications, …).',
        }),
        to: Type.String(),
        subject: Type.String(),
        sent_at: Type.String(),
        file: Type.String({ description: 'The `.eml` file in the outbox folder.' }),
        links: Type.Array(Type.String(), { description: "The mail's links, decoded (quoted-printable undone), in order, each once." }),
        text: Type.String({ description: 'The plain-text part (its first 4,000 characters).' }),
      }),
      {
        description:
          "The account's newest mails written to the outbox, newest first (empty in `smtp` mode). Invitation and password-reset mails " +
          'are never listed: their links act for another person.',
      },
    ),
  }),
);
