// The password-reset flow: a login asks for a link; the link, mailed to the account's address,
// lets whoever holds it set a new password. Outgoing mail goes to the configured SMTP relay;
// when outgoing mail is none (the default for a production service) nothing is sent and the
// attempt is recorded as not sent, so a copy can never mail real customers by accident.
import { createHash, randomBytes } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import type { ErpAppConfig } from './config.js';
import { hashPassword } from './database.js';
import { parseSmtpTarget, sendMail } from './smtp-client.js';

const LINK_LIFETIME_MS = 60 * 60 * 1000;

export type ResetRequestOutcome =
  /** Sent, or the login is unknown: the answer is the same, so accounts cannot be probed. */
  | { kind: 'accepted' }
  | { kind: 'mail_disabled' }
  | { kind: 'mail_failed' };

export async function requestPasswordReset(
  db: SQLite.Database, config: ErpAppConfig, baseUrl: string, login: string,
): Promise<ResetRequestOutcome> {
  const parsed = parseSmtpTarget(config.outgoingSmtp);
  const target = parsed && { ...parsed, auth: config.outgoingSmtpAuth };
  const user = db.prepare('SELECT id, email, name FROM users WHERE login = ? AND active = 1').get(login) as
    { id: number; email: string; name: string } | undefined;
  if (!target) {
    if (user) recordMail(db, user.email, 'Reset your password', '', 'not_sent', 'outgoing mail is none for this service');
    return { kind: 'mail_disabled' };
  }
  if (!user) return { kind: 'accepted' };

  const token = randomBytes(24).toString('base64url');
  const now = Date.now();
  db.prepare('INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)')
    .run(user.id, sha256(token), new Date(now).toISOString(), new Date(now + LINK_LIFETIME_MS).toISOString());
  const link = `${baseUrl}/web/reset_password?token=${token}`;
  const subject = `Reset your password for ${config.name}`;
  const text = `Hello ${user.name},\n\nSomeone asked to reset the password of the login "${login}" on ${config.name}.\n` +
    `To choose a new password, open this link within one hour:\n\n${link}\n\nIf it was not you, ignore this email.\n`;
  try {
    // A host name has no "_": the id's underscore would make the sender address invalid.
    const from = `no-reply@${config.serviceId.replace(/_/g, '-')}.teaminfra.invalid`;
    await sendMail(target, { from, to: user.email, subject, text });
    recordMail(db, user.email, subject, text, 'sent', null);
    return { kind: 'accepted' };
  } catch (error) {
    recordMail(db, user.email, subject, text, 'failed', (error as Error).message);
    return { kind: 'mail_failed' };
  }
}

/** Sets a new password with a link's token; false when the token is unknown, used or expired. */
export function completePasswordReset(db: SQLite.Database, token: string, password: string): boolean {
  const now = new Date().toISOString();
  return db.transaction(() => {
    const reset = db.prepare('SELECT id, user_id FROM password_resets WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?')
      .get(sha256(token), now) as { id: number; user_id: number } | undefined;
    if (!reset) return false;
    db.prepare('UPDATE users SET password_hash = ? WHERE id = ?').run(hashPassword(password), reset.user_id);
    db.prepare('UPDATE password_resets SET used_at = ? WHERE id = ?').run(now, reset.id);
    return true;
  })();
}

export function isResetTokenValid(db: SQLite.Database, token: string): boolean {
  return db.prepare('SELECT 1 FROM password_resets WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?')
    .get(sha256(token), new Date().toISOString()) !== undefined;
}

function recordMail(db: SQLite.Database, recipient: string, subject: string, body: string, state: string, reason: string | null) {
  db.prepare('INSERT INTO outgoing_mail (recipient, subject, body, state, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(recipient, subject, body, state, reason, new Date().toISOString());
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
