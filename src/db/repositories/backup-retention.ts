// What backup retention reads and deletes (src/engine/backup-retention.ts says what is kept).
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';

/** A backup retention may look at: a finished one, with what decides whether it is kept. */
export interface RetainedBackup {
  id: string;
  team_id: string;
  service_id: string;
  kind: string;
  state: 'pending' | 'completed' | 'failed';
  file_path: string | null;
  created_at: string;
  service_deleted: boolean;
}

/**
 * Finished backups of services on servers `node` hosts or that no node hosts (their files were
 * written on this node), newest first within each service.
 */
export async function listFinishedBackups(db: Kysely<Database>, node: string): Promise<RetainedBackup[]> {
  const rows = await db.selectFrom('backups as b').innerJoin('erp_services as s', 's.id', 'b.service_id')
    .innerJoin('servers as v', 'v.id', 's.server_id')
    .select(['b.id', 'b.team_id', 'b.service_id', 'b.kind', 'b.state', 'b.file_path', 'b.created_at', 's.deleted_at'])
    .where('b.state', 'in', ['completed', 'failed'])
    .where((eb) => eb.or([eb('v.node', 'is', null), eb('v.node', '=', node)]))
    .orderBy('b.service_id').orderBy('b.created_at', 'desc').orderBy('b.id', 'desc').execute();
  return rows.map(({ deleted_at, ...row }) => ({ ...row, service_deleted: deleted_at !== null }));
}

/**
 * The backups restores (and recoveries) still to run name (the one restored, and the safety
 * backup): queued or running ones, and those awaiting approval, which may be approved days later.
 */
export async function backupsNamedByRestores(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db.selectFrom('operations').select('parameters')
    .where('kind', 'in', ['restore', 'recover']).where('state', 'in', ['queued', 'running', 'awaiting_approval']).execute();
  const named = new Set<string>();
  for (const row of rows) {
    const parameters = JSON.parse(row.parameters) as { backup_id?: string; safety_backup_id?: string };
    if (parameters.backup_id) named.add(parameters.backup_id);
    if (parameters.safety_backup_id) named.add(parameters.safety_backup_id);
  }
  return named;
}

export async function teamRetentions(db: Kysely<Database>) {
  return db.selectFrom('team_backup_retention').selectAll().execute();
}

/** Sets a team's own retention; null takes the operator's default again. */
export async function setTeamRetention(
  db: Kysely<Database>, teamId: string, keep: { manual: number | null; safety: number | null },
): Promise<void> {
  await db.insertInto('team_backup_retention').values({ team_id: teamId, keep_manual: keep.manual, keep_safety: keep.safety })
    .onConflict((conflict) => conflict.column('team_id').doUpdateSet({ keep_manual: keep.manual, keep_safety: keep.safety })).execute();
}

/** Deletes a finished backup's row; false if it changed since it was read (or is gone). */
export async function deleteFinishedBackup(db: Kysely<Database>, backupId: string): Promise<boolean> {
  const result = await db.deleteFrom('backups').where('id', '=', backupId).where('state', 'in', ['completed', 'failed']).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Whether any backup row has this id (a file without one is left over). */
export async function backupRowExists(db: Kysely<Database>, backupId: string): Promise<boolean> {
  return (await db.selectFrom('backups').select('id').where('id', '=', backupId).executeTakeFirst()) !== undefined;
}
