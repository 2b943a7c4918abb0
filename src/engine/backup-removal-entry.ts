// The activity trail's row for a backup that retention removed. Retention acts on its own, so
// no call records it, yet a backup gone for good must still say what removed it and on whose
// settings: a scheduled backup is removed by its service's schedule (channel "schedule"), the
// row naming who last changed that schedule (a token, or a member in the panel; nobody, shown as
// the operator, while it is as the scheduler wrote it); any other backup by the retention the
// operator sets, or because its service was deleted (channel "retention"). The detail, which
// only the operator reads, says why.
import { auditStamp } from '../core/audit.js';
import type { RetainedBackup } from '../db/repositories/backup-retention.js';
import type { AuditLogTable, BackupScheduleFields, ScheduleChanger } from '../db/tables.js';

/** The schedule a scheduled backup was judged by, and who last changed it. */
export interface JudgingSchedule extends BackupScheduleFields {
  changed_by_type: ScheduleChanger['type'] | null;
  changed_by_id: string | null;
}

const PRUNE_ACTION = 'prune_backup';

export function backupRemovalEntry(backup: RetainedBackup, schedule: JudgingSchedule | undefined, keptFailed: number): AuditLogTable {
  const bySchedule = backup.kind === 'scheduled' && !backup.service_deleted;
  const changer = bySchedule && schedule?.changed_by_type && schedule.changed_by_id
    ? { actor_type: schedule.changed_by_type, actor_id: schedule.changed_by_id }
    : { actor_type: 'operator' as const, actor_id: null };
  return {
    ...auditStamp(), team_id: backup.team_id, ...changer, channel: bySchedule ? 'schedule' : 'retention',
    action: PRUNE_ACTION, target_type: 'backup', target_id: backup.id, outcome: 'allowed', code: null,
    detail: whyRemoved(backup, schedule, keptFailed),
  };
}

function whyRemoved(backup: RetainedBackup, schedule: JudgingSchedule | undefined, keptFailed: number): string {
  const service = `ERP service ${backup.service_id}`;
  if (backup.service_deleted) return `${service} was deleted.`;
  if (backup.kind !== 'scheduled') return `Beyond the ${backup.kind} backups of ${service} its team's retention keeps.`;
  if (backup.state === 'failed') return `Older than the newest ${keptFailed} failed scheduled backups of ${service}.`;
  const keeps = schedule ? `${schedule.keep_daily} daily, ${schedule.keep_weekly} weekly, ${schedule.keep_monthly} monthly` : 'the default';
  return `Not kept by the schedule of ${service} (${keeps}).`;
}
