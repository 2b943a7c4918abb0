// Restoring a backup into a service (or one of its copies). The driver verifies the backup
// before anything changes, stops the service, lets us take the safety backup, swaps the
// database and starts the service again if it ran. The safety backup is its own backup row,
// ended here in its own transaction, so it stays listed (and restorable) whatever happens next.
import { nowIso } from '../../db/ids.js';
import { findBackupById, insertPendingBackup } from '../../db/repositories/backups.js';
import type { ActionContext, ActionResult } from './action-types.js';
import { backupFilePath } from '../backup-files.js';
import { DriverError, type ServiceSpec } from '../driver.js';
import type { RestoreParameters } from '../requests/backups.js';
import { endBackupState } from '../state-changes.js';
import { inWriteTransaction } from '../write-transaction.js';
import { withRestorableBackup } from '../../offsite/restorable-backup.js';
import { persistingHooks, requireService } from './service-of-operation.js';

export function restoreParametersOf(parameters: string): RestoreParameters {
  return JSON.parse(parameters) as RestoreParameters;
}

export async function restoreAction(context: ActionContext): Promise<ActionResult> {
  const { db, driver, operation } = context;
  const spec = await requireService(db, operation);
  const parameters = restoreParametersOf(operation.parameters);
  const backup = await findBackupById(db, parameters.backup_id);
  if (!backup || backup.state !== 'completed' || !backup.file_path || !backup.sha256) {
    throw new DriverError(`Backup ${parameters.backup_id} no longer exists, so nothing was restored.`);
  }
  // Its row is made only once the backup is staged and the service stopped (takeSafetyBackup).
  const stagedBefore = (await findBackupById(db, parameters.safety_backup_id)) !== undefined;
  const restore = () => driver.restore(spec, { path: backup.file_path!, sha256: backup.sha256! }, {
    ...persistingHooks(db, spec.id),
    // From the request, not from what runs now: a resumed restore may find the service stopped by its first attempt.
    ranBefore: parameters.previous_state === 'running',
    resume: { key: operation.id, stagedBefore },
    async beforeSwap({ hasData }) {
      // A service never started has no data to keep.
      if (hasData) await takeSafetyBackup(context, spec, parameters.safety_backup_id);
    },
  });
  // The server's copy gone (its volume, its server): the off-site copy is fetched to where the driver reads it.
  const running = context.secrets
    ? await withRestorableBackup(db, context.secrets, context.dataDir, { id: backup.id, team_id: backup.team_id, file_path: backup.file_path, sha256: backup.sha256 }, restore)
    : await restore();
  const safety = await findBackupById(db, parameters.safety_backup_id);
  return {
    result: { backup_id: backup.id, safety_backup_id: safety?.id ?? null, restarted: running !== null },
    service: running ? { state: 'running', reason: null, ...running } : { state: 'stopped', reason: null, pid: null },
  };
}

async function takeSafetyBackup({ db, driver, operation, dataDir }: ActionContext, spec: ServiceSpec, backupId: string): Promise<void> {
  const earlier = await findBackupById(db, backupId);
  // Resumed after it was taken, perhaps after the swap too: the first one holds the data from before.
  if (earlier?.state === 'completed') return;
  if (earlier?.state === 'failed') throw new DriverError('The safety backup could not be taken, so nothing was restored.');
  if (!earlier) {
    await insertPendingBackup(db, { id: backupId, teamId: operation.team_id, serviceId: spec.id, kind: 'safety', operationId: operation.id, at: nowIso() });
  }
  try {
    const file = await driver.backup(spec, backupFilePath(dataDir, spec.id, backupId));
    await inWriteTransaction(db, (trx) => endBackupState(trx, backupId, {
      state: 'completed', filePath: file.path, sizeBytes: file.sizeBytes, sha256: file.sha256, at: nowIso(),
    }));
  } catch (error) {
    const reason = error instanceof DriverError ? error.reason : 'The backup failed because of an internal error; it has been logged.';
    await inWriteTransaction(db, (trx) => endBackupState(trx, backupId, { state: 'failed', reason, at: nowIso() }));
    if (!(error instanceof DriverError)) throw error;
    throw new DriverError(`The safety backup could not be taken (${reason.replace(/\.$/, '')}), so nothing was restored.`, false, { cause: error });
  }
}
