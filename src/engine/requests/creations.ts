// Creating an ERP service on a server, and creating a server, as queued operations. The new
// row exists at once (provisioning); the worker makes it real.
import { AppError, notFound } from '../../core/errors.js';
import { findInFlightOperation, type OperationRow } from '../../db/repositories/operations.js';
import { insertServer } from '../../db/repositories/servers.js';
import { insertService } from '../../db/repositories/services.js';
import { findApp } from '../apps/app-registry.js';
import { changeServerState, writeServiceEvent } from '../state-changes.js';
import { enqueue, operationInFlight, type RequestContext } from './enqueue.js';

export async function requestServiceCreation(
  context: RequestContext, capability: string, input: { server_id: string; name: string; app?: string | undefined },
): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    // Checked before the server is: a name no one registered is the request's mistake, whatever the server.
    if (input.app !== undefined && (await findApp(trx, input.app)) === null) {
      throw new AppError('validation_failed',
        `There is no app named "${input.app}". The operator registers apps (teaminfra admin list-apps shows them); demo and tryton are bundled.`);
    }
    const server = await trx.selectFrom('servers').select(['id', 'state', 'capacity'])
      .where('id', '=', input.server_id).where('team_id', '=', context.reach.teamId).where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!server) throw notFound('server');
    if (server.state !== 'ready') {
      const busy = await findInFlightOperation(trx, { serverId: server.id });
      if (busy) throw operationInFlight(`Server ${server.id}`, busy);
      throw new AppError('conflict', `Server ${server.id} is ${server.state}, not ready, so it cannot take new ERP services.`);
    }
    const hosted = await trx.selectFrom('erp_services').select((eb) => eb.fn.countAll<number>().as('count'))
      .where('server_id', '=', server.id).where('deleted_at', 'is', null).executeTakeFirstOrThrow();
    if (Number(hosted.count) >= server.capacity) {
      throw new AppError('conflict',
        `Server ${server.id} is full: it hosts ${hosted.count} of ${server.capacity} ERP services. Choose another server.`);
    }
    if (input.app !== undefined && input.app !== 'demo') {
      // Local servers run the embedded demo application as processes; an app's containers need an engine.
      const engine = await trx.selectFrom('docker_servers').select('server_id').where('server_id', '=', server.id).executeTakeFirst();
      if (!engine) {
        throw new AppError('conflict', `Server ${server.id} runs its ERP services as local processes, which can run only the demo app; ` +
          `the app ${input.app} needs a server that is a Docker engine.`);
      }
    }
    const serviceId = await insertService(trx, {
      teamId: context.reach.teamId, serverId: server.id, name: input.name, state: 'provisioning', app: input.app ?? null,
    });
    await writeServiceEvent(trx, serviceId, 'service.created', operationId, at);
    return { kind: 'create', serviceId, serverId: server.id, parameters: {} };
  });
}

export async function requestServerCreation(
  context: RequestContext, capability: string, input: { name: string; capacity: number },
): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx, { operationId, at }) => {
    const serverId = await insertServer(trx, { teamId: context.reach.teamId, name: input.name, capacity: input.capacity });
    await changeServerState(trx, serverId, { state: 'provisioning' }, operationId, at, 'server.created');
    return { kind: 'create_server', serviceId: null, serverId, parameters: {} };
  });
}
