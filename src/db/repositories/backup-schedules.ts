// Backup schedules (src/engine/backup-schedule/ says what they mean): read, set, and the
// scheduler's compare-and-set on the slot it takes.
import type { Kysely } from 'kysely';
import type { BackupScheduleFields, BackupSchedulesTable, Database } from '../tables.js';

export type ScheduleRow = BackupSchedulesTable;

export async function findSchedule(db: Kysely<Database>, serviceId: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('backup_schedules').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
}

export async function findTeamDefaultSchedule(db: Kysely<Database>, teamId: string): Promise<BackupScheduleFields | undefined> {
  return db.selectFrom('team_backup_schedule_defaults')
    .select(['frequency', 'time_of_day', 'keep_daily', 'keep_weekly', 'keep_monthly'])
    .where('team_id', '=', teamId).executeTakeFirst();
}

export async function setTeamDefaultSchedule(db: Kysely<Database>, teamId: string, fields: BackupScheduleFields): Promise<void> {
  await db.insertInto('team_backup_schedule_defaults').values({ team_id: teamId, ...fields })
    .onConflict((conflict) => conflict.column('team_id').doUpdateSet(fields)).execute();
}

export async function teamTimeZone(db: Kysely<Database>, teamId: string): Promise<string> {
  const team = await db.selectFrom('teams').select('timezone').where('id', '=', teamId).executeTakeFirstOrThrow();
  return team.timezone;
}

/** Writes a service's schedule, and who changed it (a changed one starts over: no slot of the old one is pending). */
export async function saveSchedule(
  db: Kysely<Database>,
  row: Pick<ScheduleRow, 'service_id' | 'team_id' | 'next_run_at' | 'updated_at' | 'changed_by_type' | 'changed_by_id'> & BackupScheduleFields,
): Promise<void> {
  const { service_id: _service, team_id: _team, ...fields } = row;
  // A schedule turned off takes nothing more, not even the retry of a slot that failed before.
  const changes = row.frequency === 'off' ? { ...fields, retry_at: null } : fields;
  await db.insertInto('backup_schedules').values({ ...row, current_backup_id: null, attempts: 0, retry_at: null })
    .onConflict((conflict) => conflict.column('service_id').doUpdateSet(changes)).execute();
}

/** Writes the row of a service that had none yet; nothing if another node wrote it first. */
export async function insertScheduleIfMissing(
  db: Kysely<Database>, row: Pick<ScheduleRow, 'service_id' | 'team_id' | 'next_run_at' | 'updated_at'> & BackupScheduleFields,
): Promise<void> {
  await db.insertInto('backup_schedules').values({ ...row, current_backup_id: null, attempts: 0, retry_at: null })
    .onConflict((conflict) => conflict.column('service_id').doNothing()).execute();
}

/** Live services (and copies) the scheduler has not written a schedule for yet. */
export async function listServicesWithoutSchedule(db: Kysely<Database>, limit: number) {
  return db.selectFrom('erp_services as s').innerJoin('teams as t', 't.id', 's.team_id')
    .leftJoin('backup_schedules as b', 'b.service_id', 's.id')
    .select(['s.id', 's.team_id', 's.parent_id', 't.timezone'])
    .where('b.service_id', 'is', null).where('s.deleted_at', 'is', null)
    .orderBy('s.id').limit(limit).execute();
}

/**
 * Schedules whose next slot is due by `now`, oldest slot first, with what taking it needs. None of
 * a service whose server was marked lost (its engine will never answer): its slot stays due, and
 * is taken once recover_erp_service has moved it to another server.
 */
export async function listDueSchedules(db: Kysely<Database>, now: string, limit: number) {
  return db.selectFrom('backup_schedules as b').innerJoin('erp_services as s', 's.id', 'b.service_id')
    .innerJoin('teams as t', 't.id', 'b.team_id')
    .innerJoin('servers as v', 'v.id', 's.server_id')
    .select(['b.service_id', 'b.team_id', 'b.frequency', 'b.time_of_day', 'b.next_run_at', 's.server_id', 's.parent_id', 's.deleted_at', 't.timezone'])
    .where('b.next_run_at', '<=', now).where('v.state', '!=', 'lost').orderBy('b.next_run_at').limit(limit).execute();
}

/** Schedules whose last slot's backup is to be looked at again (it may have failed); none on a lost server, as above. */
export async function listRetriesDue(db: Kysely<Database>, now: string, limit: number) {
  return db.selectFrom('backup_schedules as b').innerJoin('erp_services as s', 's.id', 'b.service_id')
    .leftJoin('backups as k', 'k.id', 'b.current_backup_id')
    .innerJoin('servers as v', 'v.id', 's.server_id')
    .select(['b.service_id', 'b.team_id', 'b.attempts', 'b.retry_at', 'b.current_backup_id', 'k.state as backup_state', 's.server_id', 's.deleted_at'])
    .where('b.retry_at', '<=', now).where('v.state', '!=', 'lost').orderBy('b.retry_at').limit(limit).execute();
}

/**
 * Takes the slot `expected` for a new backup (or leaves it, `backupId` null, when there is
 * nothing to back up): moves next_run_at to `next` only if it still holds `expected`. True for
 * the one caller whose update changed the row.
 */
export async function takeSlot(
  db: Kysely<Database>, serviceId: string, expected: string,
  change: { next: string | null; backupId: string | null; retryAt: string | null; at: string },
): Promise<boolean> {
  const result = await db.updateTable('backup_schedules')
    .set({
      next_run_at: change.next, current_backup_id: change.backupId, attempts: change.backupId ? 1 : 0,
      retry_at: change.retryAt, updated_at: change.at,
    })
    .where('service_id', '=', serviceId).where('next_run_at', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The same compare-and-set for a retry: only the caller that saw these attempts and retry time wins. */
export async function takeRetry(
  db: Kysely<Database>, serviceId: string, seen: { attempts: number; retryAt: string },
  change: { attempts: number; backupId: string | null; retryAt: string | null; at: string },
): Promise<boolean> {
  const result = await db.updateTable('backup_schedules')
    .set({ attempts: change.attempts, current_backup_id: change.backupId, retry_at: change.retryAt, updated_at: change.at })
    .where('service_id', '=', serviceId).where('attempts', '=', seen.attempts).where('retry_at', '=', seen.retryAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The newest failed scheduled backups of a service, for its page. */
export async function listFailedScheduledBackups(db: Kysely<Database>, serviceId: string, limit: number) {
  return db.selectFrom('backups').select(['id', 'created_at', 'reason'])
    .where('service_id', '=', serviceId).where('kind', '=', 'scheduled').where('state', '=', 'failed')
    .orderBy('created_at', 'desc').limit(limit).execute();
}

/** A service's completed scheduled backups: what its schedule's retention decides about. */
export async function listCompletedScheduledBackups(db: Kysely<Database>, serviceId: string) {
  return db.selectFrom('backups').select(['id', 'created_at'])
    .where('service_id', '=', serviceId).where('kind', '=', 'scheduled').where('state', '=', 'completed').execute();
}

/** Every schedule of the given services, for retention. */
export async function schedulesOfServices(db: Kysely<Database>, serviceIds: readonly string[]) {
  if (serviceIds.length === 0) return [];
  return db.selectFrom('backup_schedules as b').innerJoin('teams as t', 't.id', 'b.team_id')
    .select(['b.service_id', 'b.frequency', 'b.time_of_day', 'b.keep_daily', 'b.keep_weekly', 'b.keep_monthly', 't.timezone',
      'b.changed_by_type', 'b.changed_by_id'])
    .where('b.service_id', 'in', serviceIds).execute();
}
