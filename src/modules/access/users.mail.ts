/**
 * The mail that carries a one-time link to a person (an invitation, a password reset), as a kind of
 * the queue of its own (`access`). Its payload is sealed with the app secret: the link in it is as
 * good as a password until used, and the database keeps only the hash of its token otherwise.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/index.js';
import { escapeHtml } from '../../delivery/placeholders.js';
import type { MailMessage } from '../../delivery/transport.js';
import { systemFrom } from '../../delivery/transports.js';
import type { MailKind } from '../../messages/messages.kinds.js';
import { seal, unseal } from '../../util/seal.js';
import { enqueueSystemMail, systemMailKind } from '../notifications/notifications.mail.js';

const KIND = 'access';
const SEAL_PURPOSE = 'access-mail';

/** Queues `message` sealed, in the caller's transaction: it exists exactly when the link's row does. */
export async function enqueueAccessMail(
  db: Db,
  config: Pick<Config, 'appSecret'>,
  userId: number,
  message: MailMessage,
  now: Date,
): Promise<void> {
  const payload = seal(config.appSecret, SEAL_PURPOSE, JSON.stringify(message));
  await enqueueSystemMail(db, userId, message, now, { kind: KIND, payload });
}

/** The access mail as a kind of the queue: unsealed at sending, then sent as the service's own mail is. */
export const accessMailKind: MailKind = {
  name: KIND,
  source: null,
  render: (deps, rows) =>
    systemMailKind.render(
      deps,
      rows.map((row) => ({ ...row, payload: row.payload === null ? null : unseal(deps.config.appSecret, SEAL_PURPOSE, row.payload) })),
    ),
};

function mail(
  config: Pick<Config, 'dkim' | 'publicUrl'>,
  to: string,
  subject: string,
  lines: string[],
  link?: { url: string; action: string },
): MailMessage {
  const text = (link ? [...lines, '', link.url] : lines).join('\n');
  const html =
    lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') +
    (link ? `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.action)}</a></p>` : '');
  return { from: systemFrom(config), to, subject, text, html };
}

const invitedAs = (accountName: string, role: string) =>
  `You are invited to the account "${accountName}" as ${role === 'admin' ? 'an' : 'a'} ${role}.`;

/** The invitation: where to set a name and a password, valid 7 days, once. */
export function invitationMail(
  config: Pick<Config, 'dkim' | 'publicUrl'>,
  to: string,
  accountName: string,
  role: string,
  link: string,
): MailMessage {
  return mail(
    config,
    to,
    `You are invited to ${accountName}`,
    [invitedAs(accountName, role), 'Open this link to set your name and password. It works once, for 7 days.'],
    { url: link, action: 'Accept the invitation' },
  );
}

/**
 * The invitation to an address that already belongs to a person of another account: no link (an
 * address belongs to one person), but what happened, so the person can ask for another address to
 * be invited. Its subject is an invitation's, as the inviter was answered as for any address.
 */
export function invitationElsewhereMail(
  config: Pick<Config, 'dkim' | 'publicUrl'>,
  to: string,
  accountName: string,
  role: string,
): MailMessage {
  return mail(config, to, `You are invited to ${accountName}`, [
    invitedAs(accountName, role),
    'This address already belongs to a person of another account of this service, and an address can belong to one person only, so it cannot accept this invitation.',
    `To join "${accountName}", ask whoever invited you to invite another address of yours. Your own account is unchanged.`,
  ]);
}

/** The reset link, valid 1 hour, once. */
export function resetMail(config: Pick<Config, 'dkim' | 'publicUrl'>, to: string, link: string): MailMessage {
  return mail(
    config,
    to,
    'Reset your password',
    [
      'Someone asked to reset the password of this address. Open this link to choose a new one. It works once, for 1 hour.',
      'If it was not you, ignore this mail: your password stays as it is.',
    ],
    { url: link, action: 'Choose a new password' },
  );
}
