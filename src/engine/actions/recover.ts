// Making a service again on another server after its own was marked lost (lost-server.ts), from
// its newest off-site backup (fixed when the recovery was asked for): the service keeps its id,
// and so its secrets, its copies, its mail settings and its backup schedule; it is provisioned
// on the new server, the backup is fetched from off-site, decrypted, checked and restored into
// it (the lost server is not asked: restorable-backup.ts), it is started, and only then does its
// row move to the new server. Converges after a crash: provisioning is idempotent, and the
// restore stages anew. One that ends failed (or is given up after interruptions: perform.ts)
// leaves nothing of the service on the new server (docker/recovery-leftovers.ts). The result
// says the time of the data it came back with, the data-loss window.
import type { Kysely } from 'kysely';
import { findBackupById } from '../../db/repositories/backups.js';
import type { Database } from '../../db/tables.js';
import { withRestorableBackup } from '../../offsite/restorable-backup.js';
import { removeRecoveryLeftovers } from '../docker/recovery-leftovers.js';
import { DriverError } from '../driver.js';
import { loadServerSpec, loadServiceSpec } from '../service-spec.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import type { ActionContext, ActionResult } from './action-types.js';
import { persistingHooks } from './service-of-operation.js';

/** What a recover operation was queued with (operations.parameters). */
export interface RecoverParameters {
  backup_id: string;
  from_server_id: string;
  to_server_id: string;
}

export async function recoverAction({ db, driver, operation, dataDir, secrets }: ActionContext): Promise<ActionResult> {
  const parameters = JSON.parse(operation.parameters) as RecoverParameters;
  const serviceId = operation.service_id as string;
  const backup = await findBackupById(db, parameters.backup_id);
  if (!backup || backup.state !== 'completed' || !backup.file_path || !backup.sha256) {
    throw new DriverError(`Backup ${parameters.backup_id} no longer exists, so the service was not recovered.`);
  }
  if (!secrets) throw new Error('recovering a service needs the secrets box (off-site destination and backup key)');
  const found = await loadServiceSpec(db, serviceId);
  if (!found) throw new DriverError('The ERP service no longer exists.');
  // Made on the new server; its row moves there only once it runs (below), so a failed recovery
  // leaves it on the lost server, where asking again is allowed. Its old port was the lost server's.
  const spec = { ...found, port: null, pid: null, server: await loadServerSpec(db, parameters.to_server_id) };
  let running;
  try {
    await driver.provision(spec);
    running = await withRestorableBackup(db, secrets, dataDir,
      { id: backup.id, team_id: backup.team_id, file_path: backup.file_path, sha256: backup.sha256 },
      () => driver.restore(spec, { path: backup.file_path!, sha256: backup.sha256! }, {
        ...persistingHooks(db, spec.id),
        ranBefore: true,
        resume: { key: operation.id, stagedBefore: false },
        // Nothing to keep: the service has no data on its new server yet.
        beforeSwap: async () => undefined,
      }), { serverLost: true });
    if (!running) throw new DriverError('The service did not start on its new server after the restore.');
  } catch (error) {
    // Ends failed: nothing of it stays on the new server (its row stays on the lost one, to be asked again).
    await removeRecoveryLeftovers(db, serviceId, parameters.to_server_id).catch(() => undefined);
    throw error;
  }
  await db.updateTable('erp_services').set({ server_id: parameters.to_server_id }).where('id', '=', serviceId).execute();
  return {
    result: { backup_id: backup.id, server_id: parameters.to_server_id, data_as_of: backup.completed_at ?? backup.created_at },
    service: { state: 'running', reason: null, ...running },
  };
}

/** A recovery given up after interruptions (perform.ts): what its attempts made on the new server goes, as when it fails. */
export async function removeWhatRecoveryMade(db: Kysely<Database>, operation: OperationRow): Promise<void> {
  const { to_server_id: serverId } = JSON.parse(operation.parameters) as RecoverParameters;
  if (operation.service_id) await removeRecoveryLeftovers(db, operation.service_id, serverId);
}
