// A service's schedule as the API shows and sets it. A service the scheduler has not written a
// row for yet shows the schedule it will get: its team's default (a copy's: off).
import type { Kysely } from 'kysely';
import { notFound } from '../../core/errors.js';
import type { BackupScheduleFields, Database, ScheduleChanger } from '../../db/tables.js';
import {
  findSchedule, findTeamDefaultSchedule, listCompletedScheduledBackups, saveSchedule, teamTimeZone,
} from '../../db/repositories/backup-schedules.js';
import { succeedApprovedInPlace } from '../requests/enqueue.js';
import { inWriteTransaction } from '../write-transaction.js';
import { COPY_DEFAULT_SCHEDULE, keptByGrandfatherFatherSon, nextSlotAfter, TEAM_DEFAULT_SCHEDULE } from './schedule-rules.js';

export interface ScheduleView {
  service_id: string;
  frequency: BackupScheduleFields['frequency'];
  time: string;
  keep_daily: number;
  keep_weekly: number;
  keep_monthly: number;
  next_run_at: string | null;
}

export interface ScheduleInput {
  frequency: BackupScheduleFields['frequency'];
  time: string;
  keep_daily: number;
  keep_weekly: number;
  keep_monthly: number;
}

/** The schedule a service without a row of its own follows. */
export async function defaultScheduleOf(db: Kysely<Database>, service: { team_id: string; parent_id: string | null }): Promise<BackupScheduleFields> {
  if (service.parent_id !== null) return COPY_DEFAULT_SCHEDULE;
  return (await findTeamDefaultSchedule(db, service.team_id)) ?? TEAM_DEFAULT_SCHEDULE;
}

export async function readSchedule(db: Kysely<Database>, serviceId: string, now: number): Promise<ScheduleView> {
  const service = await liveService(db, serviceId);
  const row = await findSchedule(db, serviceId);
  if (row) return viewOf(serviceId, row, row.frequency === 'off' ? null : row.next_run_at);
  const fields = await defaultScheduleOf(db, service);
  const next = nextSlotAfter(fields, now, await teamTimeZone(db, service.team_id));
  return viewOf(serviceId, fields, next === null ? null : new Date(next).toISOString());
}

export interface ScheduleChange {
  /** Who changes it: named beside the schedule for each backup its retention removes. */
  by: ScheduleChanger;
  /** The operation that waited for approval of this change (set_backup_schedule): it succeeds with it. */
  approvedOperationId?: string | undefined;
}

/** Sets the schedule; its next slot is the first one after now (a change never backs up at once). */
export async function writeSchedule(
  db: Kysely<Database>, serviceId: string, input: ScheduleInput, now: number, change: ScheduleChange,
): Promise<ScheduleView> {
  const fields = fieldsOf(input);
  return inWriteTransaction(db, async (trx) => {
    const service = await liveService(trx, serviceId);
    const next = nextSlotAfter(fields, now, await teamTimeZone(trx, service.team_id));
    const nextRunAt = next === null ? null : new Date(next).toISOString();
    const at = new Date(now).toISOString();
    await saveSchedule(trx, {
      service_id: serviceId, team_id: service.team_id, ...fields, next_run_at: nextRunAt, updated_at: at,
      changed_by_type: change.by.type, changed_by_id: change.by.id,
    });
    if (change.approvedOperationId) await succeedApprovedInPlace(trx, change.approvedOperationId, at);
    return viewOf(serviceId, fields, nextRunAt);
  });
}

/**
 * The backups that exist now and that setting `input` would remove: those the schedule as it is
 * keeps and the new one would not (set_backup_schedule's test for backups:delete). One the
 * schedule as it is already lets go is pruned at the next pass whatever is set; one taken later
 * is the new schedule's to keep or not. Retention reads a service without a row of its own by
 * the built-in default (backup-retention.ts); so does this.
 */
export async function backupsTheChangeWouldRemove(db: Kysely<Database>, serviceId: string, input: ScheduleInput, now: number): Promise<string[]> {
  const backups = await listCompletedScheduledBackups(db, serviceId);
  if (backups.length === 0) return [];
  const service = await liveService(db, serviceId);
  const timeZone = await teamTimeZone(db, service.team_id);
  const keptNow = keptByGrandfatherFatherSon(backups, (await findSchedule(db, serviceId)) ?? TEAM_DEFAULT_SCHEDULE, timeZone, now);
  const keptAfter = keptByGrandfatherFatherSon(backups, fieldsOf(input), timeZone, now);
  return [...keptNow].filter((id) => !keptAfter.has(id));
}

function fieldsOf(input: ScheduleInput): BackupScheduleFields {
  return {
    frequency: input.frequency, time_of_day: input.time,
    keep_daily: input.keep_daily, keep_weekly: input.keep_weekly, keep_monthly: input.keep_monthly,
  };
}

async function liveService(db: Kysely<Database>, serviceId: string) {
  const service = await db.selectFrom('erp_services').select(['id', 'team_id', 'parent_id'])
    .where('id', '=', serviceId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!service) throw notFound('ERP service');
  return service;
}

function viewOf(serviceId: string, fields: BackupScheduleFields, nextRunAt: string | null): ScheduleView {
  return {
    service_id: serviceId, frequency: fields.frequency, time: fields.time_of_day,
    keep_daily: fields.keep_daily, keep_weekly: fields.keep_weekly, keep_monthly: fields.keep_monthly, next_run_at: nextRunAt,
  };
}
