// A server the operator declares lost for good (teaminfra admin mark-server-lost): its disk, its
// engine and whatever ran there are gone. In one write transaction: the server becomes `lost`
// (server.lost), every operation still queued or running on it or on its services fails (their
// engine will not answer; a worker still waiting on one finds it ended and records nothing), a
// backup such an operation was taking fails with it, and each of its services becomes `failed`
// with the reason, ready to be made again on another server from its newest off-site backup
// (recover_erp_service). Nothing is asked of the lost engine.
import { nowIso } from '../db/ids.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { backupIdOf } from './actions/backup.js';
import { changeServerState, changeServiceState, endBackupState, recordOperationState } from './state-changes.js';
import { inWriteTransaction } from './write-transaction.js';

export function lostServerReason(serverId: string): string {
  return `Its server ${serverId} was marked lost by the operator. Make it again on another server from its newest off-site backup (recover_erp_service).`;
}

/** Marks `serverId` lost; the services it held (now failed). Marking a lost server again changes nothing. */
export async function markServerLost(db: Kysely<Database>, serverId: string): Promise<{ services: string[]; operations: string[] }> {
  return inWriteTransaction(db, async (trx) => {
    const server = await trx.selectFrom('servers').select(['id', 'state']).where('id', '=', serverId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!server || server.state === 'lost') return { services: [], operations: [] };
    const at = nowIso();
    const reason = lostServerReason(serverId);
    await changeServerState(trx, serverId, { state: 'lost' }, null, at, 'server.lost');
    const services = await trx.selectFrom('erp_services').select('id').where('server_id', '=', serverId).where('deleted_at', 'is', null).execute();
    const serviceIds = services.map((service) => service.id);
    const inFlight = await trx.selectFrom('operations').selectAll().where('state', 'in', ['queued', 'running', 'awaiting_approval'])
      .where((eb) => eb.or([eb('server_id', '=', serverId), ...(serviceIds.length > 0 ? [eb('service_id', 'in', serviceIds)] : [])])).execute();
    for (const operation of inFlight) {
      await trx.updateTable('operations').set({ state: 'failed', reason, finished_at: at, lease_owner: null, lease_expires_at: null })
        .where('id', '=', operation.id).execute();
      await recordOperationState(trx, { ...operation, state: 'failed', reason, finished_at: at }, 'failed', reason, at);
      if (operation.kind === 'backup') await endBackupState(trx, backupIdOf(operation.parameters), { state: 'failed', reason, at });
    }
    for (const id of serviceIds) {
      await changeServiceState(trx, id, { state: 'failed', reason, pid: null }, { kind: 'reconcile', operationId: null }, at);
    }
    return { services: serviceIds, operations: inFlight.map((operation) => operation.id) };
  });
}
