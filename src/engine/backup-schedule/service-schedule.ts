// A service's schedule as the API shows and sets it. A service the scheduler has not written a
// row for yet shows the schedule it will get: its team's default (a copy's: off).
import type { Kysely } from 'kysely';
import { notFound } from '../../core/errors.js';
import type { BackupScheduleFields, Database } from '../../db/tables.js';
import { findSchedule, findTeamDefaultSchedule, saveSchedule, teamTimeZone } from '../../db/repositories/backup-schedules.js';
import { inWriteTransaction } from '../write-transaction.js';
import { COPY_DEFAULT_SCHEDULE, nextSlotAfter, TEAM_DEFAULT_SCHEDULE } from './schedule-rules.js';

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

/** Sets the schedule; its next slot is the first one after now (a change never backs up at once). */
export async function writeSchedule(db: Kysely<Database>, serviceId: string, input: ScheduleInput, now: number): Promise<ScheduleView> {
  const fields: BackupScheduleFields = {
    frequency: input.frequency, time_of_day: input.time,
    keep_daily: input.keep_daily, keep_weekly: input.keep_weekly, keep_monthly: input.keep_monthly,
  };
  return inWriteTransaction(db, async (trx) => {
    const service = await liveService(trx, serviceId);
    const next = nextSlotAfter(fields, now, await teamTimeZone(trx, service.team_id));
    const nextRunAt = next === null ? null : new Date(next).toISOString();
    await saveSchedule(trx, { service_id: serviceId, team_id: service.team_id, ...fields, next_run_at: nextRunAt, updated_at: new Date(now).toISOString() });
    return viewOf(serviceId, fields, nextRunAt);
  });
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
