// Off-site copies of backups (schema.sql, backup_offsite_copies): queued when a backup completes,
// taken by one uploader at a time under a lease, ended stored or failed; their rows outlive the
// backup's so that retention's removal reaches the store too (src/offsite).
import type { Kysely } from 'kysely';
import type { BackupOffsiteCopiesTable, Database } from '../tables.js';

export type OffsiteCopyRow = BackupOffsiteCopiesTable;

/** Queues the off-site copy of a backup that just completed, when its team has a destination. */
export async function queueOffsiteCopy(
  trx: Kysely<Database>, backup: { id: string; team_id: string; service_id: string }, at: string,
): Promise<void> {
  const destination = await trx.selectFrom('backup_destinations').select(['id', 'prefix'])
    .where('team_id', '=', backup.team_id).where('replaced_at', 'is', null).executeTakeFirst();
  if (!destination) return;
  await trx.insertInto('backup_offsite_copies').values({
    backup_id: backup.id, team_id: backup.team_id, service_id: backup.service_id, destination_id: destination.id, state: 'pending',
    reason: null, object_key: objectKeyOf(destination.prefix, backup.service_id, backup.id), size_bytes: null, attempts: 0,
    next_attempt_at: at, lease_owner: null, lease_expires_at: null, created_at: at, stored_at: null,
  }).onConflict((conflict) => conflict.column('backup_id').doNothing()).execute();
}

/** Ids only, never a name: the store sees which service's backup an object is, not what it is called. */
export function objectKeyOf(prefix: string, serviceId: string, backupId: string): string {
  return `${prefix}${serviceId}/${backupId}.tar.zst.age`;
}

export async function offsiteCopiesOf(db: Kysely<Database>, backupIds: readonly string[]): Promise<OffsiteCopyRow[]> {
  if (backupIds.length === 0) return [];
  return db.selectFrom('backup_offsite_copies').selectAll().where('backup_id', 'in', [...backupIds]).execute();
}

export async function findOffsiteCopy(db: Kysely<Database>, backupId: string): Promise<OffsiteCopyRow | undefined> {
  return db.selectFrom('backup_offsite_copies').selectAll().where('backup_id', '=', backupId).executeTakeFirst();
}

/** Pending copies due now, oldest first, with their leases (the caller judges whether a held one is takeable). */
export async function dueOffsiteCopies(db: Kysely<Database>, now: string, limit: number): Promise<OffsiteCopyRow[]> {
  return db.selectFrom('backup_offsite_copies').selectAll().where('state', '=', 'pending').where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at').limit(limit).execute();
}

/** Takes a copy's lease if nobody took it since it was read as `copy` (compare-and-set on its holder and expiry); true when taken. */
export async function takeOffsiteLease(db: Kysely<Database>, copy: OffsiteCopyRow, owner: string, until: string): Promise<boolean> {
  let query = db.updateTable('backup_offsite_copies').set({ lease_owner: owner, lease_expires_at: until })
    .where('backup_id', '=', copy.backup_id).where('state', '=', 'pending');
  query = copy.lease_owner === null ? query.where('lease_owner', 'is', null) : query.where('lease_owner', '=', copy.lease_owner);
  query = copy.lease_expires_at === null ? query.where('lease_expires_at', 'is', null) : query.where('lease_expires_at', '=', copy.lease_expires_at);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease this owner holds; false when it lost it. */
export async function renewOffsiteLease(db: Kysely<Database>, backupId: string, owner: string, until: string): Promise<boolean> {
  const result = await db.updateTable('backup_offsite_copies').set({ lease_expires_at: until })
    .where('backup_id', '=', backupId).where('lease_owner', '=', owner).where('state', '=', 'pending').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Copies whose backup's row is gone (retention removed it): their objects are deleted next. */
export async function orphanedOffsiteCopies(db: Kysely<Database>, limit: number): Promise<OffsiteCopyRow[]> {
  return db.selectFrom('backup_offsite_copies as c').selectAll('c')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('backups as b').select('b.id').whereRef('b.id', '=', 'c.backup_id'))))
    .where((eb) => eb.or([eb('c.lease_expires_at', 'is', null), eb('c.lease_expires_at', '<', new Date().toISOString())]))
    .limit(limit).execute();
}

export async function deleteOffsiteCopy(db: Kysely<Database>, backupId: string): Promise<void> {
  await db.deleteFrom('backup_offsite_copies').where('backup_id', '=', backupId).execute();
}

/**
 * A new destination: copies not stored yet go there, from their first attempt again (the old
 * one may be what failed them); stored copies stay where they are.
 */
export async function moveUnstoredCopies(trx: Kysely<Database>, teamId: string, destination: { id: string; prefix: string }, at: string): Promise<void> {
  const rows = await trx.selectFrom('backup_offsite_copies').select(['backup_id', 'service_id'])
    .where('team_id', '=', teamId).where('state', 'in', ['pending', 'failed']).execute();
  for (const row of rows) {
    await trx.updateTable('backup_offsite_copies').set({
      destination_id: destination.id, object_key: objectKeyOf(destination.prefix, row.service_id, row.backup_id),
      state: 'pending', reason: null, attempts: 0, next_attempt_at: at, lease_owner: null, lease_expires_at: null,
    }).where('backup_id', '=', row.backup_id).execute();
  }
}
