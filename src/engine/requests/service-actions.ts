// Start, stop, redeploy and delete of one ERP service, as queued operations. At most one
// operation per service is in flight: the check and the insert share one write transaction.
import type { Kysely } from 'kysely';
import type { Database, ServiceState } from '../../db/tables.js';
import { AppError, notFound } from '../../core/errors.js';
import { findInFlightOperation, type OperationRow } from '../../db/repositories/operations.js';
import { changeServiceState } from '../state-changes.js';
import { enqueue, operationInFlight, type RequestContext } from './enqueue.js';

export type ServiceActionKind = 'start' | 'stop' | 'redeploy' | 'delete';

const WHILE_RUNNING: Record<ServiceActionKind, ServiceState> = {
  start: 'starting', stop: 'stopping', redeploy: 'redeploying', delete: 'deleting',
};

export async function requestServiceAction(
  context: RequestContext, capability: string, input: { service_id: string }, kind: ServiceActionKind,
): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    // Read again inside the transaction: invoke() saw it a moment ago, outside.
    const service = await trx.selectFrom('erp_services').select(['id', 'server_id', 'parent_id', 'revision'])
      .where('id', '=', input.service_id).where('team_id', '=', context.reach.teamId).where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!service) throw notFound('ERP service');
    await refuseIfBusy(trx, service.id, service.parent_id);
    if (kind === 'start' || kind === 'redeploy') await refuseIfNeverCreated(trx, context.reach.teamId, service.id, kind);
    // Deleting a service deletes its copies: without their parent they could not be listed or reached.
    const copies = kind === 'delete' ? await copiesOf(trx, service.id) : [];
    for (const copyId of copies) await refuseIfBusy(trx, copyId, null);
    for (const id of [service.id, ...copies]) await changeServiceState(trx, id, { state: WHILE_RUNNING[kind] }, { kind, operationId }, at);
    return {
      kind, serviceId: service.id, serverId: service.server_id,
      // Fixed now, so that a resumed redeploy does not deploy twice, and a resumed delete deletes the same copies.
      parameters: kind === 'redeploy' ? { revision: service.revision + 1 } : kind === 'delete' ? { copies } : {},
    };
  });
}

/** One operation at a time per service; and nothing on a copy while its parent is being deleted. */
export async function refuseIfBusy(trx: Kysely<Database>, serviceId: string, parentId: string | null): Promise<void> {
  const busy = await findInFlightOperation(trx, { serviceId });
  if (busy) throw operationInFlight(`ERP service ${serviceId}`, busy);
  const parentBusy = parentId ? await findInFlightOperation(trx, { serviceId: parentId }) : undefined;
  if (parentBusy?.kind === 'delete') throw operationInFlight(`The ERP service ${parentId} this copy belongs to`, parentBusy);
}

/**
 * A service whose create failed (its app's image was not on the engine, say) has no secrets,
 * network or volumes to run on, and create is not run again for it: starting it could only fail
 * with an internal error, so it is refused with what to do. Stop and delete stay allowed.
 */
async function refuseIfNeverCreated(trx: Kysely<Database>, teamId: string, serviceId: string, kind: 'start' | 'redeploy'): Promise<void> {
  const create = await trx.selectFrom('operations').select(['id', 'state']).where('team_id', '=', teamId).where('service_id', '=', serviceId)
    .where('kind', '=', 'create').orderBy('id', 'desc').executeTakeFirst();
  if (create?.state !== 'failed') return;
  throw new AppError('conflict',
    `ERP service ${serviceId} was never created: its create operation ${create.id} failed, so there is nothing to ${kind}. ` +
      'Delete it and create the service again.',
    { operationId: create.id });
}

async function copiesOf(trx: Kysely<Database>, serviceId: string): Promise<string[]> {
  const rows = await trx.selectFrom('erp_services').select('id').where('parent_id', '=', serviceId).where('deleted_at', 'is', null)
    .orderBy('id').execute();
  return rows.map((row) => row.id);
}
