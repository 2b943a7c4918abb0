// Asking for a service to move to another server (move_erp_service), or back to the server its
// last move left while that server still keeps it (rollback_erp_service_move). Everything a
// move can be refused for is checked here, before anything is touched: the token reaches both
// servers (else 404), the target is another Docker engine, ready, reached by the watcher, with
// room, and runs the service's images; the service is running or stopped, with no operation in
// flight. The server it moves from and what it was then are fixed now, so a resumed move ends
// the same way.
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import { findReachableServer } from '../../db/repositories/servers.js';
import { findReachableService } from '../../db/repositories/services.js';
import { findKeptMove } from '../../db/repositories/service-moves.js';
import type { MoveParameters } from '../actions/move.js';
import { enqueue, operationInFlight, type PlannedOperation, type RequestContext } from './enqueue.js';
import { refuseIfBusy } from './service-actions.js';

type Service = NonNullable<Awaited<ReturnType<typeof findReachableService>>>;
type Server = NonNullable<Awaited<ReturnType<typeof findReachableServer>>>;

export async function requestMove(context: RequestContext, capability: string, input: { service_id: string; server_id: string }): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx) => {
    const service = await findReachableService(trx, context.reach, input.service_id);
    if (!service) throw notFound('ERP service');
    const to = await findReachableServer(trx, context.reach, input.server_id);
    if (!to) throw notFound('server');
    if (to.id === service.server_id) {
      throw new AppError('validation_failed', 'The service is already on that server.', {
        errors: [{ field: 'server_id', message: 'Give another server than the one the service is on.' }],
      });
    }
    return planMove(trx, service, to, null);
  });
}

export async function requestMoveRollback(context: RequestContext, capability: string, input: { service_id: string }): Promise<OperationRow> {
  return enqueue(context, capability, input, async (trx) => {
    const service = await findReachableService(trx, context.reach, input.service_id);
    if (!service) throw notFound('ERP service');
    const move = await findKeptMove(trx, service.id, service.server_id);
    if (!move) throw new AppError('conflict', 'The service has no move to roll back: it was not moved, or its last move was already rolled back or its window ended.');
    if (move.rollback_until <= nowIso()) {
      throw new AppError('conflict', `The rollback window of the service's last move ended at ${move.rollback_until}, so the server it left no longer keeps it; ` +
        'move it with move_erp_service instead.');
    }
    const to = await findReachableServer(trx, context.reach, move.from_server_id);
    if (!to) throw notFound('server');
    return planMove(trx, service, to, move.id);
  });
}

async function planMove(trx: Kysely<Database>, service: Service, to: Server, rollbackOf: string | null): Promise<PlannedOperation> {
  if (service.state !== 'running' && service.state !== 'stopped') {
    throw new AppError('conflict', `The service is ${service.state}: a service is moved while it is running or stopped.`);
  }
  if (to.state !== 'ready') throw new AppError('conflict', `That server is ${to.state}: a service is moved only onto a ready server.`);
  if (to.reachable === 0) throw new AppError('conflict', "That server's Docker engine does not answer, so nothing was moved; try again once it does.");
  await refuseOtherEngine(trx, service, to);
  await refuseIfFull(trx, to);
  await refuseIfBusy(trx, service.id, service.parent_id);
  await refuseWhileCopied(trx, service.id);
  const parameters: MoveParameters = {
    from_server_id: service.server_id, to_server_id: to.id, previous_state: service.state, rollback_of: rollbackOf,
  };
  return { kind: 'move', serviceId: service.id, serverId: to.id, parameters };
}

/** Only between two Docker engines; a service of its server's image (no app) only to a server of the same image. */
async function refuseOtherEngine(trx: Kysely<Database>, service: Service, to: Server): Promise<void> {
  const engines = await trx.selectFrom('docker_servers').select(['server_id', 'docker_host', 'image'])
    .where('server_id', 'in', [service.server_id, to.id]).execute();
  const from = engines.find((each) => each.server_id === service.server_id);
  const target = engines.find((each) => each.server_id === to.id);
  const refuse = (sentence: string) => new AppError('validation_failed', sentence, { errors: [{ field: 'server_id', message: sentence }] });
  if (!from || !target) throw refuse('Only a service on a Docker server moves, and only to another Docker server.');
  if (from.docker_host === target.docker_host) throw refuse("That server is the same Docker engine as the service's: choose a server on another engine.");
  const app = await trx.selectFrom('erp_services').select('app').where('id', '=', service.id).executeTakeFirstOrThrow();
  const ownImage = app.app === null || app.app === 'demo';
  if (ownImage && (from.image ?? null) !== (target.image ?? null)) {
    throw refuse("The service runs its server's image, and that server runs another one: choose a server with the same image.");
  }
}

/** A copy being made reads the service's data where the service is: not while it changes server. */
async function refuseWhileCopied(trx: Kysely<Database>, serviceId: string): Promise<void> {
  const copying = await trx.selectFrom('operations').select(['id', 'kind', 'state']).where('kind', '=', 'copy')
    .where('state', 'in', ['queued', 'running']).where('parameters', '=', JSON.stringify({ source_id: serviceId })).executeTakeFirst();
  if (copying) throw operationInFlight(`ERP service ${serviceId} (a copy of it is being made)`, copying);
}

/** Like a new service, a moved one takes a place on its new server. */
async function refuseIfFull(trx: Kysely<Database>, to: Server): Promise<void> {
  const hosted = await trx.selectFrom('erp_services').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('server_id', '=', to.id).where('deleted_at', 'is', null).executeTakeFirstOrThrow();
  if (Number(hosted.count) >= to.capacity) {
    throw new AppError('conflict', `That server is full: it hosts ${hosted.count} of ${to.capacity} ERP services and copies. ` +
      'Choose another server, or make room there first.');
  }
}
