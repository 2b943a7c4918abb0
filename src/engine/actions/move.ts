// Moving a service to another server (move_erp_service), and back (rollback_erp_service_move):
// its data is copied to the new server while it keeps serving; then the write pause: it is
// stopped, a final consistent snapshot is loaded there, it is started there and must answer its
// health check, and only then does it switch (docker/move-switch.ts). Anything that fails before
// the switch leaves it on its old server as it was (running again if it ran) and nothing of it on
// the new one: never two running instances, never its data in no place. After the switch, the old
// server keeps the stopped service and its data for the rollback window (moves/rollback-window.ts).
// Converges after a crash: before its switch a resumed move starts over (the copy replaces what
// the crashed attempt left on the new server); after it, it only finishes.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { newId, nowIso } from '../../db/ids.js';
import { findMoveOfOperation, forgetLeftOn, insertMove, markRolledBack } from '../../db/repositories/service-moves.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import { DriverError, type RunningService, type ServiceDriver, type ServiceSpec } from '../driver.js';
import { parseEngineAddress, publishedHost } from '../docker/engine-address.js';
import { switchToServer } from '../docker/move-switch.js';
import { startAgainAfter } from '../docker/service-restore.js';
import { pauseBeganEarlier } from '../moves/earlier-pause.js';
import { moveRollbackMsFromEnv } from '../moves/rollback-window.js';
import { loadServerSpec, loadServiceSpec } from '../service-spec.js';
import type { ActionContext, ActionResult } from './action-types.js';
import { persistingHooks } from './service-of-operation.js';

/** What a move was queued with (operations.parameters). */
export interface MoveParameters {
  from_server_id: string;
  to_server_id: string;
  /** What the service was when the move was asked for, and is again on its old server if the move fails. */
  previous_state: 'running' | 'stopped';
  /** For a rollback, the move it undoes. */
  rollback_of: string | null;
}

export function moveParametersOf(parameters: string): MoveParameters {
  return JSON.parse(parameters) as MoveParameters;
}

export async function moveAction({ db, driver, operation }: ActionContext): Promise<ActionResult> {
  const parameters = moveParametersOf(operation.parameters);
  const found = await loadServiceSpec(db, operation.service_id as string);
  if (!found) throw new DriverError('The ERP service no longer exists.');
  const wasRunning = parameters.previous_state === 'running';
  if (found.server.id === parameters.to_server_id) return finishAfterSwitch(db, driver, operation, found, parameters);
  const source = found;
  // Its port there is chosen at its start: the one it had is its old server's.
  const target: ServiceSpec = { ...found, port: null, pid: null, server: await loadServerSpec(db, parameters.to_server_id) };
  let pauseBegan = Date.now();
  let writePauseMs = 0;
  let stopped = false;
  let running: RunningService | null;
  // Resumed after a crash in its write pause: the pause goes on from when it began (moves/earlier-pause.ts).
  const pausedEarlier = wasRunning ? await pauseBeganEarlier(driver, source, operation) : null;
  try {
    // Copied first while it serves: a target that cannot take it (an image, its disk, the load) refuses before any
    // downtime, and the pause finds the images and volumes there. A service that was stopped is copied once.
    if (wasRunning && pausedEarlier === null) await driver.transferData!(source, target);
    pauseBegan = pausedEarlier ?? Date.now();
    if (wasRunning) {
      stopped = true;
      await driver.stop(source);
    }
    await driver.transferData!(source, target);
    running = await switchToServer(db, driver, target, {
      start: wasRunning,
      recordSwitch: async (trx) => {
        writePauseMs = wasRunning ? Date.now() - pauseBegan : 0;
        await recordSwitch(trx, operation, parameters, writePauseMs);
      },
    });
  } catch (error) {
    await driver.removeFromServer!(target).catch(() => undefined);
    if (stopped) await startAgainAfter(driver, source, persistingHooks(db, source.id), error);
    throw error instanceof DriverError ? notMoved(error) : error;
  }
  if (parameters.rollback_of) await removeWhatTheRollbackLeft(db, driver, source, parameters.rollback_of);
  return resultOf(db, operation, parameters, running, writePauseMs);
}

/** The failure's reason as a sentence that says where the service is: on its old server, as it was. */
function notMoved(error: DriverError): DriverError {
  const reason = /[.!?]$/.test(error.reason) ? error.reason : `${error.reason}.`;
  return new DriverError(`The service was not moved and stays on its old server, as it was. ${reason}`, error.portUnusable, { cause: error });
}

/**
 * A move given up after its worker died too often (perform.ts): before its switch, what it made
 * on the new server goes and the service runs again on its old one if it ran; after it, the
 * service is where it moved. Either way, one instance at most.
 */
export async function abandonMove(db: Kysely<Database>, driver: ServiceDriver, operation: OperationRow): Promise<void> {
  const parameters = moveParametersOf(operation.parameters);
  const service = await loadServiceSpec(db, operation.service_id as string);
  if (!service || service.server.id === parameters.to_server_id) return;
  await driver.removeFromServer!({ ...service, port: null, pid: null, server: await loadServerSpec(db, parameters.to_server_id) });
  if (parameters.previous_state === 'running') await driver.start(service, persistingHooks(db, service.id));
}

/** In the switch's own write: the move's record (the old server keeps the service until rollback_until), or the rolled-back move's. */
async function recordSwitch(trx: Kysely<Database>, operation: OperationRow, parameters: MoveParameters, writePauseMs: number): Promise<void> {
  const at = nowIso();
  await forgetLeftOn(trx, operation.service_id as string, parameters.to_server_id, at);
  if (parameters.rollback_of) {
    await markRolledBack(trx, parameters.rollback_of);
    return;
  }
  await insertMove(trx, {
    id: newId('mov'), team_id: operation.team_id, service_id: operation.service_id as string, operation_id: operation.id,
    from_server_id: parameters.from_server_id, to_server_id: parameters.to_server_id, write_pause_ms: writePauseMs, switched_at: at,
    rollback_until: new Date(Date.parse(at) + moveRollbackMsFromEnv()).toISOString(),
  });
}

/** A rollback leaves nothing on the server it left: the data there is older than what it brought back. The sweep retries a failure. */
async function removeWhatTheRollbackLeft(db: Kysely<Database>, driver: ServiceDriver, left: ServiceSpec, moveId: string): Promise<void> {
  try {
    await driver.removeFromServer!(left);
    await db.updateTable('service_moves').set({ state: 'removed', removed_at: nowIso() }).where('id', '=', moveId).execute();
  } catch {
    // Left to the sweep (moves/left-data-sweep.ts), which tries again.
  }
}

/** Resumed after its switch: the old server's instance stopped, the service running where it moved if it ran. */
async function finishAfterSwitch(
  db: Kysely<Database>, driver: ServiceDriver, operation: OperationRow, service: ServiceSpec, parameters: MoveParameters,
): Promise<ActionResult> {
  const left: ServiceSpec = { ...service, server: await loadServerSpec(db, parameters.from_server_id) };
  await driver.stop(left);
  const running = parameters.previous_state === 'running' ? await driver.start(service, persistingHooks(db, service.id)) : null;
  if (parameters.rollback_of) await removeWhatTheRollbackLeft(db, driver, left, parameters.rollback_of);
  const move = parameters.rollback_of ? undefined : await findMoveOfOperation(db, operation.id);
  return resultOf(db, operation, parameters, running, move?.write_pause_ms);
}

async function resultOf(
  db: Kysely<Database>, operation: OperationRow, parameters: MoveParameters, running: RunningService | null, writePauseMs: number | undefined,
): Promise<ActionResult> {
  const move = parameters.rollback_of ? undefined : await findMoveOfOperation(db, operation.id);
  const dnsChanges = await dnsChangesOf(db, operation.service_id as string, parameters.to_server_id);
  return {
    result: {
      from_server_id: parameters.from_server_id, server_id: parameters.to_server_id,
      ...(writePauseMs !== undefined ? { write_pause_ms: writePauseMs } : {}),
      ...(move ? { rollback_until: move.rollback_until } : {}),
      ...(dnsChanges.length > 0 ? { dns_change: dnsChangeSentence(dnsChanges) } : {}),
    },
    service: running ? { state: 'running', reason: null, ...running } : { state: 'stopped', reason: null, pid: null },
  };
}

/**
 * The team's own domains, which the team's DNS points at a server: each now to be pointed at the
 * new one, named by its base domain (point the name where that one points) or else its engine's host.
 */
async function dnsChangesOf(db: Kysely<Database>, serviceId: string, serverId: string): Promise<{ domain: string; point_at: string }[]> {
  const domains = await db.selectFrom('service_domains').select('domain').where('service_id', '=', serviceId).where('kind', '=', 'custom').orderBy('domain').execute();
  if (domains.length === 0) return [];
  const server = await db.selectFrom('docker_servers').select(['base_domain', 'docker_host']).where('server_id', '=', serverId).executeTakeFirst();
  const pointAt = server?.base_domain ?? engineHostOf(server?.docker_host ?? null);
  return domains.map(({ domain }) => ({ domain, point_at: pointAt }));
}

function engineHostOf(dockerHost: string | null): string {
  try {
    return dockerHost ? publishedHost(parseEngineAddress(dockerHost)) : 'the new server';
  } catch {
    return 'the new server';
  }
}

/** `Point erp.example.com and shop.example.com at the address of apps.b.example.com.` */
function dnsChangeSentence(changes: { domain: string; point_at: string }[]): string {
  const names = changes.map((change) => change.domain);
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `Point ${listed} at the address of ${changes[0]!.point_at}; the new server serves ${names.length === 1 ? 'it' : 'them'} once the DNS says so.`;
}
