// Asking for a service to be made again on another server (recover_erp_service), once the
// operator marked its own server lost: never while that server may still run it, so that a
// service never runs twice. The target is a server the token reaches, of the same kind (a Docker
// service's backups are archives for a Docker engine), and the backup is the service's newest
// one stored off-site, fixed now so that a resumed recovery restores the same one.
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import { findReachableServer } from '../../db/repositories/servers.js';
import { findReachableService } from '../../db/repositories/services.js';
import type { RecoverParameters } from '../actions/recover.js';
import { isEngineBackupPath } from '../docker/engine-backup-path.js';
import { changeServiceState } from '../state-changes.js';
import { enqueue, type RequestContext } from './enqueue.js';
import { refuseIfBusy } from './service-actions.js';

export async function requestRecover(context: RequestContext, capability: string, input: { service_id: string; server_id: string }): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    const service = await findReachableService(trx, context.reach, input.service_id);
    if (!service) throw notFound('ERP service');
    const from = await trx.selectFrom('servers').select(['id', 'state']).where('id', '=', service.server_id).executeTakeFirstOrThrow();
    if (from.state !== 'lost') {
      throw new AppError('conflict', "The service's server is not marked lost, so the service may still run there: it is recovered " +
        'elsewhere only once the operator marked its server lost (teaminfra admin mark-server-lost).');
    }
    if (service.parent_id !== null) {
      throw new AppError('validation_failed', 'A copy is not recovered: recover the service it copies, then make a new copy of it.', {
        errors: [{ field: 'service_id', message: 'This is a copy; give the service it copies.' }],
      });
    }
    const to = await findReachableServer(trx, context.reach, input.server_id);
    if (!to) throw notFound('server');
    if (to.state !== 'ready') throw new AppError('conflict', `That server is ${to.state}: a service is recovered only onto a ready server.`);
    const backup = await newestOffsiteBackup(trx, service.id);
    if (!backup) throw new AppError('conflict', 'The service has no backup stored off-site, so it cannot be recovered.');
    const docker = await trx.selectFrom('docker_servers').select('server_id').where('server_id', '=', to.id).executeTakeFirst();
    if ((docker !== undefined) !== isEngineBackupPath(backup.file_path)) {
      throw new AppError('validation_failed', `The service ran on a ${isEngineBackupPath(backup.file_path) ? 'Docker' : 'local'} server; ` +
        'its backups restore only onto a server of that kind, which that server is not.', {
        errors: [{ field: 'server_id', message: 'Choose a server of the same kind as the lost one.' }],
      });
    }
    await refuseIfBusy(trx, service.id, null);
    await changeServiceState(trx, service.id, { state: 'restoring' }, { kind: 'recover', operationId }, at);
    const parameters: RecoverParameters = { backup_id: backup.id, from_server_id: from.id, to_server_id: to.id };
    return { kind: 'recover', serviceId: service.id, serverId: to.id, parameters };
  });
}

async function newestOffsiteBackup(trx: Kysely<Database>, serviceId: string): Promise<{ id: string; file_path: string } | undefined> {
  const row = await trx.selectFrom('backups as b').innerJoin('backup_offsite_copies as c', 'c.backup_id', 'b.id')
    .select(['b.id', 'b.file_path']).where('b.service_id', '=', serviceId).where('b.state', '=', 'completed').where('c.state', '=', 'stored')
    .orderBy('b.created_at', 'desc').orderBy('b.id', 'desc').executeTakeFirst();
  return row && row.file_path !== null ? { id: row.id, file_path: row.file_path } : undefined;
}
