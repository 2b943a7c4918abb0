// Backups of a service or copy. Reach is decided on the service (see core/reach.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { decodeCursor, type PageRequest } from '../pagination.js';

export const BACKUP_COLUMNS = [
  'b.id', 'b.service_id', 'b.state', 'b.kind', 'b.size_bytes', 'b.sha256', 'b.reason', 'b.created_at', 'b.completed_at',
] as const;

export async function listBackupsOfService(db: Kysely<Database>, serviceId: string, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  let query = db.selectFrom('backups as b').select(BACKUP_COLUMNS).where('b.service_id', '=', serviceId);
  if (after) query = query.where('b.id', '>', after);
  return query.orderBy('b.id').limit(page.limit + 1).execute();
}

export async function findBackup(db: Kysely<Database>, teamId: string, backupId: string) {
  return db.selectFrom('backups as b').select([...BACKUP_COLUMNS, 'b.team_id'])
    .where('b.id', '=', backupId).where('b.team_id', '=', teamId).executeTakeFirst();
}
