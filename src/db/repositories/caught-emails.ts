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

export async function findEmail(db: Kysely<Database>, teamId: string, emailId: string) {
  return db.selectFrom('caught_emails as e').selectAll('e').where('e.id', '=', emailId).where('e.team_id', '=', teamId).executeTakeFirst();
}

/** Deletes the oldest emails of a copy beyond `keep`; returns the raw files to remove. */
export async function trimEmailsOfCopy(db: Kysely<Database>, copyId: string, keep: number): Promise<string[]> {
  const excess = await db.selectFrom('caught_emails').select(['id', 'raw_path']).where('copy_id', '=', copyId)
    .orderBy('id', 'desc').offset(keep).limit(1_000_000).execute();
  if (excess.length === 0) return [];
  await db.deleteFrom('caught_emails').where('id', 'in', excess.map((row) => row.id)).execute();
  return excess.map((row) => row.raw_path);
}
