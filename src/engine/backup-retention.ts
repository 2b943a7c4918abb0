// Backup retention: which backups are kept, and removing the rest, files and rows.
// - A service's scheduled backups (kind "scheduled") are kept by its schedule's
//   grandfather-father-son counts (backup-schedule/schedule-rules.ts), with its newest
//   KEPT_FAILED_SCHEDULED failed ones; a manual or safety backup never counts against them.
// - Per service, the newest `keepSafety` safety backups (default 3) and the newest `keepManual`
//   manual ones (default: all; manual backups are the team's, asked for one by one) are kept;
//   a team may have its own numbers (team_backup_retention, set by `teaminfra admin
//   set-backup-retention`). A failed backup has no file; its row stays, as the record of why.
// - A deleted service's backups cannot be listed, downloaded or restored any more: all of them
//   go, files and rows, at the first pass after the delete.
// - A backup a queued or running restore names (the one being restored, its safety backup), or
//   one awaiting approval, is never removed, whatever its age; nor is a pending one.
// - Files under <data dir>/backups/ that no backup row names (left by a crash between the row's
//   delete and the file's, or by an earlier version) are removed.
// Every removal is a row of the activity trail, written with the row's delete (backup-removal-entry.ts).
// Each node prunes the backups of the services its servers host: their files are in its data
// directory. Backups of Docker services live in the engine's backups volume (docker://...),
// which any node reaches: every node prunes them, the node whose delete of the row wins removes
// the file, through a helper container on the engine (docker/backup-store.ts).
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../db/connect.js';
import {
  backupRowExists, backupsNamedByRestores, deleteFinishedBackup, listFinishedBackups, teamRetentions, type RetainedBackup,
} from '../db/repositories/backup-retention.js';
import { schedulesOfServices } from '../db/repositories/backup-schedules.js';
import { backupRemovalEntry, type JudgingSchedule } from './backup-removal-entry.js';
import { isEngineBackupPath } from './docker/engine-backup-path.js';
import { keptByGrandfatherFatherSon, TEAM_DEFAULT_SCHEDULE } from './backup-schedule/schedule-rules.js';
import { inWriteTransaction } from './write-transaction.js';

export interface RetentionPolicy {
  /** Newest manual backups kept per service; null: every one. */
  keepManual: number | null;
  /** Newest safety backups kept per service. */
  keepSafety: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { keepManual: null, keepSafety: 3 };

/** Failed scheduled backups kept per service: the record of why, without growing for ever. */
export const KEPT_FAILED_SCHEDULED = 5;

/** Removes what the policy does not keep; returns the ids of the backups removed. */
export async function pruneBackups(db: Db, options: {
  node: string;
  defaults: RetentionPolicy;
  /** Removes files kept on Docker engines; tests may watch it. */
  removeEngineFiles?: (db: Db, paths: string[]) => Promise<void>;
  /** Now, for the schedules' retention (the scheduler's clock in tests). */
  now?: number;
}): Promise<string[]> {
  const policies = await policiesByTeam(db, options.defaults);
  const named = await backupsNamedByRestores(db.kysely);
  const keptSoFar = new Map<string, number>();
  const removed: string[] = [];
  const engineFiles: string[] = [];
  const finished = await listFinishedBackups(db.kysely, options.node);
  const schedules = await schedulesOfScheduledBackups(db, finished);
  const scheduledKept = keptScheduledBackups(finished, schedules, options.now ?? Date.now());
  for (const backup of finished) {
    const key = `${backup.service_id}/${backup.kind}/${backup.state}`;
    const newer = keptSoFar.get(key) ?? 0;
    keptSoFar.set(key, newer + 1);
    if (keeps(backup, newer, policies.get(backup.team_id) ?? options.defaults, scheduledKept) || named.has(backup.id)) continue;
    if (!(await removeBackupRow(db, backup, schedules.get(backup.service_id)))) continue;
    removed.push(backup.id);
    if (backup.file_path === null) continue;
    if (isEngineBackupPath(backup.file_path)) engineFiles.push(backup.file_path);
    else rmSync(backup.file_path, { force: true });
  }
  await removeFilesWithoutRows(db);
  if (engineFiles.length > 0) await (options.removeEngineFiles ?? removeEngineBackupFiles)(db, engineFiles);
  return removed;
}

// Loaded when there is something to remove: the Docker engine client is not needed otherwise.
async function removeEngineBackupFiles(db: Db, paths: string[]): Promise<void> {
  const { removeEngineBackupFiles: remove } = await import('./docker/backup-store.js');
  await remove(db.kysely, paths);
}

type ServiceSchedule = JudgingSchedule & { timezone: string };

/** The schedule of each service with scheduled backups among `finished`, by service. */
async function schedulesOfScheduledBackups(db: Db, finished: RetainedBackup[]): Promise<Map<string, ServiceSchedule>> {
  const serviceIds = new Set(finished.filter((backup) => backup.kind === 'scheduled').map((backup) => backup.service_id));
  return new Map((await schedulesOfServices(db.kysely, [...serviceIds])).map((row) => [row.service_id, row]));
}

/** The completed scheduled backups each service's schedule keeps. */
function keptScheduledBackups(finished: RetainedBackup[], schedules: Map<string, ServiceSchedule>, now: number): Set<string> {
  const byService = new Map<string, RetainedBackup[]>();
  for (const backup of finished) {
    if (backup.kind !== 'scheduled' || backup.state !== 'completed') continue;
    byService.set(backup.service_id, [...(byService.get(backup.service_id) ?? []), backup]);
  }
  const kept = new Set<string>();
  for (const [serviceId, backups] of byService) {
    const schedule = schedules.get(serviceId);
    for (const id of keptByGrandfatherFatherSon(backups, schedule ?? TEAM_DEFAULT_SCHEDULE, schedule?.timezone ?? 'UTC', now)) kept.add(id);
  }
  return kept;
}

/** `newer`: how many backups of the same service, kind and state are newer. */
function keeps(backup: RetainedBackup, newer: number, policy: RetentionPolicy, scheduledKept: Set<string>): boolean {
  if (backup.service_deleted) return false;
  if (backup.kind === 'scheduled') return backup.state === 'failed' ? newer < KEPT_FAILED_SCHEDULED : scheduledKept.has(backup.id);
  if (backup.state === 'failed') return true;
  const limit = backup.kind === 'safety' ? policy.keepSafety : policy.keepManual;
  return limit === null || newer < limit;
}

/**
 * The row before the file (checked again: a restore may have named it since), so that no row
 * ever names a file that is gone; true if this pass deleted it (another node's may have), and
 * then its activity row is written with the delete: one per removal, whichever node made it.
 */
function removeBackupRow(db: Db, backup: RetainedBackup, schedule: JudgingSchedule | undefined): Promise<boolean> {
  return inWriteTransaction(db.kysely, async (trx) => {
    if ((await backupsNamedByRestores(trx)).has(backup.id)) return false;
    if (!(await deleteFinishedBackup(trx, backup.id))) return false;
    await trx.insertInto('audit_log').values(backupRemovalEntry(backup, schedule, KEPT_FAILED_SCHEDULED)).execute();
    return true;
  });
}

async function policiesByTeam(db: Db, defaults: RetentionPolicy): Promise<Map<string, RetentionPolicy>> {
  const policies = new Map<string, RetentionPolicy>();
  for (const row of await teamRetentions(db.kysely)) {
    policies.set(row.team_id, { keepManual: row.keep_manual ?? defaults.keepManual, keepSafety: row.keep_safety ?? defaults.keepSafety });
  }
  return policies;
}

// Runs after the rows were pruned, so every file it finds without a row is left over. A backup
// being written has its (pending) row from before its first byte. A deleted service's folder
// goes too once empty (no backup of it can begin any more; a live one's may be about to).
async function removeFilesWithoutRows(db: Db): Promise<void> {
  const root = join(db.dataDir, 'backups');
  for (const folder of foldersIn(root)) {
    const dir = join(root, folder);
    for (const file of readdirSync(dir)) {
      const backupId = file.split('.')[0] as string;
      if (backupId.startsWith('bak_') && !(await backupRowExists(db.kysely, backupId))) rmSync(join(dir, file), { force: true });
    }
    if (readdirSync(dir).length === 0 && await isDeletedService(db, folder)) rmdirSync(dir);
  }
}

async function isDeletedService(db: Db, serviceId: string): Promise<boolean> {
  const service = await db.kysely.selectFrom('erp_services').select('deleted_at').where('id', '=', serviceId).executeTakeFirst();
  return service?.deleted_at != null;
}

function foldersIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
}
