// Emails kept by copies' mail catchers: newest first, paginated, trimmed to a limit per copy.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { decodeCursor, type PageRequest } from '../pagination.js';

export const EMAIL_SUMMARY_COLUMNS = ['e.id', 'e.copy_id', 'e.message_id', 'e.sender', 'e.recipients', 'e.subject', 'e.size_bytes', 'e.received_at'] as const;

export async function listEmailsOfCopy(db: Kysely<Database>, copyId: string, page: PageRequest) {
  const before = decodeCursor(page.cursor);
  let query = db.selectFrom('caught_emails as e').select([...EMAIL_SUMMARY_COLUMNS, 'e.attachments']).where('e.copy_id', '=', copyId);
  if (before) query = query.where('e.id', '<', before);
  return query.orderBy('e.id', 'desc').limit(page.limit + 1).execute();
}

/** An email's parts, without its raw message (read only when it is downloaded: rawMessageOf). */
export async function findEmail(db: Kysely<Database>, teamId: string, emailId: string) {
  return db.selectFrom('caught_emails as e')
    .select([...EMAIL_SUMMARY_COLUMNS, 'e.team_id', 'e.text_body', 'e.html_body', 'e.attachments', 'e.raw_path'])
    .where('e.id', '=', emailId).where('e.team_id', '=', teamId).executeTakeFirst();
}

/** The raw message kept in the database, or undefined (no such email, or one kept as a file by an earlier version). */
export async function rawMessageOf(db: Kysely<Database>, emailId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('caught_emails').select('raw_message').where('id', '=', emailId).executeTakeFirst();
  return row?.raw_message ? Buffer.from(row.raw_message) : undefined;
}

/** Deletes the oldest emails of a copy beyond `keep`; returns the raw files (kept by an earlier version) to remove. */
export async function trimEmailsOfCopy(db: Kysely<Database>, copyId: string, keep: number): Promise<string[]> {
  const excess = await db.selectFrom('caught_emails').select(['id', 'raw_path']).where('copy_id', '=', copyId)
    .orderBy('id', 'desc').offset(keep).limit(1_000_000).execute();
  if (excess.length === 0) return [];
  await db.deleteFrom('caught_emails').where('id', 'in', excess.map((row) => row.id)).execute();
  return excess.map((row) => row.raw_path).filter((path) => path !== '');
}
