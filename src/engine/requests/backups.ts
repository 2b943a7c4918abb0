// Backing up and restoring an ERP service or copy, as queued operations. Both follow the rule
// of one operation in flight per service. A backup leaves the service as it is (it keeps
// running); a restore shows it `restoring` until the worker is done.
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';
import { newId } from '../../db/ids.js';
import { insertPendingBackup } from '../../db/repositories/backups.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import { findReachableService } from '../../db/repositories/services.js';
import { changeServiceState } from '../state-changes.js';
import { enqueue, type RequestContext } from './enqueue.js';
import { refuseIfBusy } from './service-actions.js';

/** What a restore operation was queued with (operations.parameters). */
export interface RestoreParameters {
  backup_id: string;
  /** The service's state before the restore: what it returns to if the restore fails. */
  previous_state: 'running' | 'stopped' | 'failed';
  /** Fixed now, so that a resumed restore does not take a second safety backup. */
  safety_backup_id: string;
}

export async function requestBackup(context: RequestContext, capability: string, input: { service_id: string }): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    const service = await trx.selectFrom('erp_services').select(['id', 'server_id', 'parent_id'])
      .where('id', '=', input.service_id).where('team_id', '=', context.reach.teamId).where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!service) throw notFound('ERP service');
    await refuseIfBusy(trx, service.id, service.parent_id);
    const backupId = newId('bak');
    return {
      kind: 'backup', serviceId: service.id, serverId: service.server_id, parameters: { backup_id: backupId },
      // Listed (pending) from the request on, so the id in the answer can be looked at at once.
      afterInsert: (inner) => insertPendingBackup(inner, {
        id: backupId, teamId: context.reach.teamId, serviceId: service.id, kind: 'manual', operationId, at,
      }),
    };
  });
}

export async function requestRestore(
  context: RequestContext, capability: string, input: { backup_id: string; target_service_id?: string | undefined },
): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    const backup = await trx.selectFrom('backups').select(['id', 'service_id', 'state', 'file_path'])
      .where('id', '=', input.backup_id).where('team_id', '=', context.reach.teamId).executeTakeFirst();
    if (!backup) throw notFound('backup');
    if (backup.state !== 'completed' || backup.file_path === null) {
      throw new AppError('conflict', `Backup ${backup.id} is ${backup.state}: only a completed backup can be restored.`);
    }
    const target = await restoreTarget(trx, context, backup.service_id, input.target_service_id ?? backup.service_id);
    await refuseIfBusy(trx, target.id, target.parent_id);
    await changeServiceState(trx, target.id, { state: 'restoring' }, { kind: 'restore', operationId }, at);
    const parameters: RestoreParameters = {
      backup_id: backup.id, previous_state: settledState(target.state), safety_backup_id: newId('bak'),
    };
    return { kind: 'restore', serviceId: target.id, serverId: target.server_id, parameters };
  });
}

/** The service itself or one of its copies; anything else the token cannot reach does not exist for it. */
async function restoreTarget(trx: Kysely<Database>, context: RequestContext, backedUpId: string, targetId: string) {
  const target = await findReachableService(trx, context.reach, targetId);
  if (!target) throw notFound('ERP service');
  if (target.id !== backedUpId && target.parent_id !== backedUpId) {
    throw new AppError('validation_failed', 'A backup can be restored only into the service it was taken of, or into one of its copies.', {
      errors: [{ field: 'target_service_id', message: `Use ${backedUpId} or one of its copies.` }],
    });
  }
  return target;
}

// No operation is in flight (checked just before), so the state is a settled one; a
// transitional state left without its operation counts as failed.
function settledState(state: string): RestoreParameters['previous_state'] {
  return state === 'running' || state === 'stopped' ? state : 'failed';
}
