import { Type, type Static } from '@sinclair/typebox';
import { Email } from '../../http/schemas.js';

/** The most addresses one test send takes. */
export const MAX_TEST_ADDRESSES = 10;

const Emails = Type.Array(Email, {
  minItems: 1,
  maxItems: MAX_TEST_ADDRESSES,
  description: `1 to ${MAX_TEST_ADDRESSES} addresses to send the test to (\`emails[0]=…\`, \`emails[1]=…\`, or a JSON array).`,
});

export const TestSingleSendBody = Type.Object({
  utr: Type.String({ minLength: 1, maxLength: 64, description: 'The single send to test.' }),
  emails: Emails,
});
export type TestSingleSendInput = Static<typeof TestSingleSendBody>;

export const TestAutomationEmailBody = Type.Object({
  utr: Type.String({ minLength: 1, maxLength: 64, description: "The automation email's utr (as in the automation's schedule list)." }),
  emails: Emails,
});
export type TestAutomationEmailInput = Static<typeof TestAutomationEmailBody>;

/** What a test mail's queue row carries: which send or automation email it is a test of. */
export type TestPayload = { single_send_id: number } | { automation_schedule_id: number };
