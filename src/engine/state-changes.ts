// Every state change of an operation, a service, a server or a backup goes through here, inside
// the caller's transaction: the row, the transition record (operations) and the outbox event
// are written together or not at all.
import { sql, type Kysely } from 'kysely';
import { removeAllServiceDomains } from './domains/service-domains.js';
import type { Database, ServiceState } from '../db/tables.js';
import { newId } from '../db/ids.js';
import { endBackup, findBackupById } from '../db/repositories/backups.js';
import { insertEvent } from '../db/repositories/events.js';
import { queueOffsiteCopy } from '../db/repositories/offsite-copies.js';
import { insertTransition, type OperationKind, type OperationRow } from '../db/repositories/operations.js';
import type { ProxyTarget } from './driver.js';
import { serviceEventType, type EngineEventType } from './event-types.js';
import { serviceUrl } from './service-url.js';
import { healthOfState, settleIncidentsOfState, startBackupFailedIncident } from '../health/state-incidents.js';

type OperationState = OperationRow['state'];

/** Records that `operation` reached `state`, with who asked for it (its requester). */
export async function recordOperationState(
  trx: Kysely<Database>, operation: OperationRow, state: OperationState, reason: string | null, at: string,
): Promise<void> {
  await insertTransition(trx, {
    id: newId('opt'), operationId: operation.id, state, reason, at,
    tokenId: operation.requested_by_token_id, channel: operation.requested_channel,
  });
  await insertEvent(trx, {
    teamId: operation.team_id, type: `operation.${state}` satisfies EngineEventType, at,
    data: {
      id: operation.id, kind: operation.kind, state, reason, service_id: operation.service_id, server_id: operation.server_id,
      requested_channel: operation.requested_channel, created_at: operation.created_at,
    },
  });
}

export interface ServiceChange {
  state: ServiceState;
  reason?: string | null;
  pid?: number | null;
  port?: number | null;
  /** The host its port is published on (a Docker engine's); null: this machine. */
  publishedHost?: string | null;
  /** Served by its server's proxy (https url), or not (null); undefined: unchanged. */
  proxy?: ProxyTarget | null;
  revision?: number;
  deleted?: boolean;
}

/** Applies `change` to a service and writes its event; `cause` names what made it happen. */
export async function changeServiceState(
  trx: Kysely<Database>, serviceId: string, change: ServiceChange,
  cause: { kind: OperationKind | 'reconcile'; operationId: string | null }, at: string,
): Promise<void> {
  await updateService(trx, serviceId, change, at);
  await writeServiceEvent(trx, serviceId, serviceEventType(change.state, cause.kind, change.deleted), cause.operationId, at);
}

/** The row only: for a change whose event is another one (a restore's end is restore.completed or .failed). */
export async function updateService(trx: Kysely<Database>, serviceId: string, change: ServiceChange, at: string): Promise<void> {
  const health = healthOfState(change.state);
  await trx.updateTable('erp_services').set({
    state: change.state, updated_at: at, health,
    // Since the health last changed: a failure after a failure keeps the first one's time.
    health_since: sql<string>`CASE WHEN health = ${health} AND health_since IS NOT NULL THEN health_since ELSE ${at} END`,
    ...(change.reason !== undefined ? { state_reason: change.reason } : {}),
    ...(change.pid !== undefined ? { pid: change.pid } : {}),
    ...(change.port !== undefined ? { port: change.port } : {}),
    ...(change.publishedHost !== undefined ? { published_host: change.publishedHost } : {}),
    ...(change.proxy !== undefined ? { proxy_upstream: change.proxy?.upstream ?? null, proxy_health_path: change.proxy?.healthPath ?? null } : {}),
    ...(change.revision !== undefined ? { revision: change.revision } : {}),
    ...(change.deleted ? { deleted_at: at } : {}),
  }).where('id', '=', serviceId).execute();
  await settleIncidentsOfState(trx, serviceId, change, at);
  // A deleted service's names are free for another service at once.
  if (change.deleted) await removeAllServiceDomains(trx, serviceId);
}

export async function writeServiceEvent(
  trx: Kysely<Database>, serviceId: string, type: EngineEventType, operationId: string | null, at: string,
): Promise<void> {
  const service = await trx.selectFrom('erp_services')
    .select(['id', 'team_id', 'name', 'server_id', 'parent_id', 'state', 'revision', 'port', 'published_host', 'proxy_upstream', 'state_reason'])
    .where('id', '=', serviceId).executeTakeFirstOrThrow();
  // Subscribers tell a deleted copy from a deleted service by its event (the webhook catalog's copy.deleted).
  const eventType: EngineEventType = type === 'service.deleted' && service.parent_id !== null ? 'copy.deleted' : type;
  await insertEvent(trx, {
    teamId: service.team_id, type: eventType, at,
    data: {
      service: {
        id: service.id, name: service.name, server_id: service.server_id, parent_id: service.parent_id,
        state: service.state, revision: service.revision,
        url: serviceUrl(service),
      },
      reason: service.state_reason, operation_id: operationId,
    },
  });
}

export async function changeServerState(
  trx: Kysely<Database>, serverId: string, change: { state: 'provisioning' | 'ready' | 'failed' | 'lost'; rootDir?: string },
  operationId: string | null, at: string, type: EngineEventType,
): Promise<void> {
  await trx.updateTable('servers')
    .set({ state: change.state, ...(change.rootDir !== undefined ? { root_dir: change.rootDir } : {}) })
    .where('id', '=', serverId).execute();
  const server = await trx.selectFrom('servers').select(['id', 'team_id', 'name', 'state', 'capacity'])
    .where('id', '=', serverId).executeTakeFirstOrThrow();
  await insertEvent(trx, {
    teamId: server.team_id, type, at,
    data: { server: { id: server.id, name: server.name, state: server.state, capacity: server.capacity }, operation_id: operationId },
  });
}

/**
 * Ends a pending backup with its backup.completed or backup.failed event; nothing if it had
 * already ended. A completed one is queued for its team's off-site destination in the same
 * transaction (src/offsite), so that no backup is ever complete without it.
 */
export async function endBackupState(
  trx: Kysely<Database>, backupId: string, outcome: Parameters<typeof endBackup>[2],
): Promise<void> {
  if (!(await endBackup(trx, backupId, outcome))) return;
  const backup = await findBackupById(trx, backupId);
  if (!backup) return;
  if (outcome.state === 'failed') await startBackupFailedIncident(trx, backup, outcome.at);
  if (backup.state === 'completed') await queueOffsiteCopy(trx, backup, outcome.at);
  await insertEvent(trx, {
    teamId: backup.team_id, type: (outcome.state === 'completed' ? 'backup.completed' : 'backup.failed') satisfies EngineEventType,
    at: outcome.at,
    data: {
      backup: { id: backup.id, service_id: backup.service_id, state: backup.state, size_bytes: backup.size_bytes, sha256: backup.sha256, kind: backup.kind },
      reason: backup.reason,
    },
  });
}

export async function writeRestoreEvent(
  trx: Kysely<Database>, operation: OperationRow, backupId: string, reason: string | null, at: string,
): Promise<void> {
  await insertEvent(trx, {
    teamId: operation.team_id, type: (reason === null ? 'restore.completed' : 'restore.failed') satisfies EngineEventType, at,
    data: { service_id: operation.service_id, backup_id: backupId, operation_id: operation.id, reason },
  });
}
