// A team's off-site backup destination and its backup key (schema.sql says who may set them:
// never a token). Rows only: sealing the secret and the key is src/offsite/destinations.ts's job.
import type { Kysely } from 'kysely';
import type { BackupDestinationsTable, Database } from '../tables.js';

export type DestinationRow = BackupDestinationsTable;

export async function findCurrentDestination(db: Kysely<Database>, teamId: string): Promise<DestinationRow | undefined> {
  return db.selectFrom('backup_destinations').selectAll().where('team_id', '=', teamId).where('replaced_at', 'is', null).executeTakeFirst();
}

export async function findDestinationById(db: Kysely<Database>, id: string): Promise<DestinationRow | undefined> {
  return db.selectFrom('backup_destinations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Makes `row` the team's destination; the one before stays (replaced) while copies are stored there. */
export async function replaceDestination(trx: Kysely<Database>, row: DestinationRow): Promise<void> {
  await trx.updateTable('backup_destinations').set({ replaced_at: row.created_at })
    .where('team_id', '=', row.team_id).where('replaced_at', 'is', null).execute();
  await trx.insertInto('backup_destinations').values(row).execute();
}

/** Replaced destinations no off-site copy is kept at any more. */
export async function deleteUnusedReplacedDestinations(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('backup_destinations').where('replaced_at', 'is not', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('backup_offsite_copies as c').select('c.backup_id').whereRef('c.destination_id', '=', 'backup_destinations.id'))))
    .execute();
}

export async function findBackupKey(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('team_backup_keys').selectAll().where('team_id', '=', teamId).executeTakeFirst();
}

/** Keeps the team's key unless it has one already (two saves at once: the first wins); true when this one was kept. */
export async function insertBackupKeyOnce(db: Kysely<Database>, row: { team_id: string; recipient: string; identity: string; created_at: string }): Promise<boolean> {
  const result = await db.insertInto('team_backup_keys').values(row).onConflict((conflict) => conflict.column('team_id').doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
