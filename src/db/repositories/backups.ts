// Backups of a service or copy. Reach is decided on the service (see core/reach.ts). A row is
// `pending` from the request on, then `completed` (with its file, size and SHA-256) or `failed`
// (with the reason); the engine writes each change with its event (engine/state-changes.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { decodeCursor, type PageRequest } from '../pagination.js';

export const BACKUP_COLUMNS = [
  'b.id', 'b.service_id', 'b.state', 'b.kind', 'b.size_bytes', 'b.sha256', 'b.reason', 'b.created_at', 'b.completed_at', 'b.server_copy_reason',
  'b.verified_at', 'b.verify_reason',
] as const;

export type BackupKind = 'manual' | 'safety' | 'scheduled';

export async function listBackupsOfService(db: Kysely<Database>, serviceId: string, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  let query = db.selectFrom('backups as b').select(BACKUP_COLUMNS).where('b.service_id', '=', serviceId);
  if (after) query = query.where('b.id', '>', after);
  return query.orderBy('b.id').limit(page.limit + 1).execute();
}

/** With the file's path, for downloads and restores; never shown to clients (views pick their fields). */
export async function findBackup(db: Kysely<Database>, teamId: string, backupId: string) {
  return db.selectFrom('backups as b').select([...BACKUP_COLUMNS, 'b.team_id', 'b.file_path'])
    .where('b.id', '=', backupId).where('b.team_id', '=', teamId).executeTakeFirst();
}

export async function findBackupById(db: Kysely<Database>, backupId: string) {
  return db.selectFrom('backups').selectAll().where('id', '=', backupId).executeTakeFirst();
}

export async function insertPendingBackup(
  db: Kysely<Database>, values: { id: string; teamId: string; serviceId: string; kind: BackupKind; operationId: string; at: string },
): Promise<void> {
  await db.insertInto('backups').values({
    id: values.id, team_id: values.teamId, service_id: values.serviceId, state: 'pending', kind: values.kind, size_bytes: null,
    sha256: null, file_path: null, operation_id: values.operationId, reason: null, created_at: values.at, completed_at: null,
  }).execute();
}

/** Ends a pending backup; false when it had already ended (a resumed operation). */
export async function endBackup(
  db: Kysely<Database>, backupId: string,
  outcome: { state: 'completed'; filePath: string; sizeBytes: number; sha256: string; at: string } | { state: 'failed'; reason: string; at: string },
): Promise<boolean> {
  const result = await db.updateTable('backups').set(outcome.state === 'completed'
    ? { state: 'completed', file_path: outcome.filePath, size_bytes: outcome.sizeBytes, sha256: outcome.sha256, completed_at: outcome.at }
    : { state: 'failed', reason: outcome.reason, completed_at: outcome.at })
    .where('id', '=', backupId).where('state', '=', 'pending').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
