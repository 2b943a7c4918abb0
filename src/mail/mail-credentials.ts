// Each copy authenticates to the mail catcher with its own credentials, so one copy can never
// file mail under another. Only the password's SHA-256 is stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';

const hashOf = (password: string) => createHash('sha256').update(password).digest('hex');

export interface MailCredentials {
  username: string;
  password: string;
}

/** New credentials for a copy (replacing any previous ones); the password is returned once. */
export async function issueMailCredentials(db: Kysely<Database>, copyId: string): Promise<MailCredentials> {
  const password = randomBytes(24).toString('base64url');
  const result = await db.updateTable('erp_services').set({ mail_username: copyId, mail_password_hash: hashOf(password) })
    .where('id', '=', copyId).where('parent_id', 'is not', null).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new Error(`${copyId} is not a copy; only copies have a mail catcher.`);
  return { username: copyId, password };
}

/** The copy these credentials belong to, or undefined. */
export async function copyForCredentials(db: Kysely<Database>, username: string, password: string) {
  const copy = await db.selectFrom('erp_services').select(['id', 'team_id', 'mail_password_hash'])
    .where('mail_username', '=', username).where('parent_id', 'is not', null).where('deleted_at', 'is', null).executeTakeFirst();
  if (!copy?.mail_password_hash) return undefined;
  const given = Buffer.from(hashOf(password));
  const expected = Buffer.from(copy.mail_password_hash);
  return given.length === expected.length && timingSafeEqual(given, expected) ? { id: copy.id, teamId: copy.team_id } : undefined;
}
