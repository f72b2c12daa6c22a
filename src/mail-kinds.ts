/**
 * Every kind of mail the queue carries, listed once. A kind is one module that declares what the
 * queue needs of it (render, where its statistics are counted, its share of the queue on
 * /metrics); the queue itself names no kind. A new kind of mail is a
 * `MailKind` exported by the module that queues it, added to this list.
 */
import { automationKind } from './modules/automations/automations.engine.js';
import { systemMailKind } from './modules/notifications/notifications.mail.js';
import { singleSendKind } from './modules/single-sends/single-sends.engine.js';
import { testSendKind } from './modules/test-sends/test-sends.kind.js';
import { accessMailKind } from './modules/access/users.mail.js';
import { mailKinds } from './messages/messages.kinds.js';

export const MAIL_KINDS = mailKinds(systemMailKind, singleSendKind, automationKind, testSendKind, accessMailKind);
