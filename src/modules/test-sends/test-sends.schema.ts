import { Type, type Static } from '@sinclair/typebox';
import { Email, Int, MAX_ID, Success } from '../../http/schemas.js';

/** The most addresses one test send takes. */
export const MAX_TEST_ADDRESSES = 10;

const Emails = Type.Array(Email, {
  minItems: 1,
  maxItems: MAX_TEST_ADDRESSES,
  description: `1 to ${MAX_TEST_ADDRESSES} addresses to send the test to (\`emails[0]=…\`, \`emails[1]=…\`, or a JSON array).`,
});

/** The contact whose data fills the placeholders of a test or a preview. */
const ContactId = Type.Optional(
  Int({
    minimum: 1,
    maximum: MAX_ID,
    description:
      "The account's contact whose data fills the placeholders (needs `contacts.read` too). Another account's, a deleted or an " +
      'unknown contact: 422 `The selected contact id is invalid.`',
  }),
);

export const TestSingleSendBody = Type.Object({
  utr: Type.String({ minLength: 1, maxLength: 64, description: 'The single send to test.' }),
  emails: Emails,
  contact_id: ContactId,
});
export type TestSingleSendInput = Static<typeof TestSingleSendBody>;

export const TestAutomationEmailBody = Type.Object({
  utr: Type.String({ minLength: 1, maxLength: 64, description: "The automation email's utr (as in the automation's schedule list)." }),
  emails: Emails,
  contact_id: ContactId,
});
export type TestAutomationEmailInput = Static<typeof TestAutomationEmailBody>;

/**
 * What a test mail's queue row carries: which send or automation email it is a test of, and the
 * contact whose data fills it when that is not the row's own contact (the address's).
 */
export type TestPayload = ({ single_send_id: number } | { automation_schedule_id: number }) & { fill_contact_id?: number };

export const PreviewQuery = Type.Object({
  utr: Type.Optional(Type.String({ maxLength: 64, description: 'The single send to preview.' })),
  contact_id: ContactId,
});
export type PreviewInput = Static<typeof PreviewQuery>;

const FillContact = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    first_name: Type.Union([Type.String(), Type.Null()]),
    last_name: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'The contact whose data fills the placeholders.' },
);

export const PreviewAnswer = Success(
  Type.Object({
    preview: Type.Object({
      subject: Type.String({ description: 'The subject as the contact would get it.' }),
      preheader: Type.String(),
      html: Type.String({
        description:
          'The HTML part as the contact would get it, footer included, without the open pixel; links are not rewritten for ' +
          'click tracking and the unsubscribe link is `#`. Show it in a sandboxed frame: it is the design as written.',
      }),
      text: Type.String({ description: 'The text part.' }),
      contact: Type.Union([FillContact, Type.Null()], {
        description: '`contact_id`, or by default the first recipient; null when the send names no contact (placeholders empty).',
      }),
    }),
  }),
  "The send's mail as one contact would get it.",
);
