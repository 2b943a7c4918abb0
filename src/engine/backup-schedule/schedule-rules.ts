// What a backup schedule means: its default, the slot it takes next, and which of its
// scheduled backups grandfather-father-son retention keeps.
import type { BackupScheduleFields } from '../../db/tables.js';
import { dayKey, instantOf, localParts, monthKey, weekKey } from './local-time.js';

/** A new service's schedule when its team set no default of its own. */
export const TEAM_DEFAULT_SCHEDULE: BackupScheduleFields = {
  frequency: 'daily', time_of_day: '03:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6,
};

/** A copy's: copies are scratch data, backed up only when someone asks. */
export const COPY_DEFAULT_SCHEDULE: BackupScheduleFields = { ...TEAM_DEFAULT_SCHEDULE, frequency: 'off' };

/** Each retention count, and the time of day, as the API accepts them. */
export const MAX_KEEP = 1000;
export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;

const HOUR = 3_600_000;

/**
 * The first slot strictly after `after`: daily at the time of day in the team's zone; hourly at
 * its minutes past every hour. Null when the schedule is off.
 */
export function nextSlotAfter(schedule: Pick<BackupScheduleFields, 'frequency' | 'time_of_day'>, after: number, timeZone: string): number | null {
  const [hour, minute] = schedule.time_of_day.split(':').map(Number) as [number, number];
  const here = localParts(after, timeZone);
  if (schedule.frequency === 'off') return null;
  if (schedule.frequency === 'hourly') {
    let slot = instantOf({ ...here, minute }, timeZone);
    while (slot <= after) slot += HOUR;
    return slot;
  }
  let slot = instantOf({ ...here, hour, minute }, timeZone);
  for (let days = 1; slot <= after; days += 1) {
    const next = new Date(Date.UTC(here.year, here.month - 1, here.day + days));
    slot = instantOf({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour, minute }, timeZone);
  }
  return slot;
}

export interface ScheduledBackupTime { id: string; created_at: string }

/**
 * The scheduled backups the schedule keeps, out of its completed ones: the newest of each of the
 * newest keep_daily local days, of the newest keep_weekly ISO weeks and of the newest
 * keep_monthly months that have one; with hourly backups, also every one of the last 24 hours.
 */
export function keptByGrandfatherFatherSon(
  backups: readonly ScheduledBackupTime[], schedule: BackupScheduleFields, timeZone: string, now: number,
): Set<string> {
  const newestFirst = [...backups].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  const kept = new Set<string>();
  const keepNewestPer = (period: (instant: number, timeZone: string) => string, count: number) => {
    const seen = new Set<string>();
    for (const backup of newestFirst) {
      if (seen.size >= count) return;
      const key = period(Date.parse(backup.created_at), timeZone);
      if (seen.has(key)) continue;
      seen.add(key);
      kept.add(backup.id);
    }
  };
  keepNewestPer(dayKey, schedule.keep_daily);
  keepNewestPer(weekKey, schedule.keep_weekly);
  keepNewestPer(monthKey, schedule.keep_monthly);
  if (schedule.frequency === 'hourly') {
    for (const backup of newestFirst) if (Date.parse(backup.created_at) > now - 24 * HOUR) kept.add(backup.id);
  }
  return kept;
}
