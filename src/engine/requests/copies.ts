// Creating a copy of an ERP service, as a queued operation. The copy's row exists at once
// (provisioning) under the service it copies; the worker gives it a snapshot of the source's
// database and its own login to the mail catcher, and it ends stopped (copy.created).
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';
import { findInFlightOperation, type OperationRow } from '../../db/repositories/operations.js';
import { insertService } from '../../db/repositories/services.js';
import { enqueue, operationInFlight, type RequestContext } from './enqueue.js';

/** While one of these runs on the source, its data is missing, changing wholesale, going away, or changing server. */
const SOURCE_UNSETTLED = new Set(['create', 'copy', 'restore', 'delete', 'move']);

export async function requestCopy(
  context: RequestContext, capability: string, input: { service_id: string; name?: string | undefined },
): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx) => {
    const source = await trx.selectFrom('erp_services').select(['id', 'name', 'server_id', 'parent_id', 'app'])
      .where('id', '=', input.service_id).where('team_id', '=', context.reach.teamId).where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!source) throw notFound('ERP service');
    const busy = await findInFlightOperation(trx, { serviceId: source.id });
    if (busy && SOURCE_UNSETTLED.has(busy.kind)) throw operationInFlight(`ERP service ${source.id}`, busy);
    // A copy of a copy is another copy of the same service (with the copied copy's data): copies
    // have one level, so whoever reaches the service reaches all of them.
    const parentId = source.parent_id ?? source.id;
    const parentBusy = source.parent_id ? await findInFlightOperation(trx, { serviceId: source.parent_id }) : undefined;
    if (parentBusy?.kind === 'delete') throw operationInFlight(`The ERP service ${parentId} this copy belongs to`, parentBusy);
    await refuseIfServerFull(trx, source.server_id);
    const copyId = await insertService(trx, {
      teamId: context.reach.teamId, serverId: source.server_id, name: input.name ?? `${source.name} (copy)`, parentId, state: 'provisioning',
      // The copy runs the app its data is of.
      app: source.app,
    });
    // Fixed now, so that a resumed operation copies from the same service.
    return { kind: 'copy', serviceId: copyId, serverId: source.server_id, parameters: { source_id: source.id } };
  });
}

/** A copy runs on its service's server, so it takes a place there like any service. */
async function refuseIfServerFull(trx: Kysely<Database>, serverId: string): Promise<void> {
  const server = await trx.selectFrom('servers').select(['id', 'state', 'capacity']).where('id', '=', serverId).executeTakeFirstOrThrow();
  if (server.state !== 'ready') {
    throw new AppError('conflict', `Server ${server.id} is ${server.state}, not ready, so it cannot take a copy now.`);
  }
  const hosted = await trx.selectFrom('erp_services').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('server_id', '=', server.id).where('deleted_at', 'is', null).executeTakeFirstOrThrow();
  if (Number(hosted.count) >= server.capacity) {
    throw new AppError('conflict',
      `Server ${server.id} is full: it hosts ${hosted.count} of ${server.capacity} ERP services and copies, and a copy runs on ` +
        'the server of the service it copies. Delete a copy or a service there first.');
  }
}
