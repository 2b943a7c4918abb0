// Operations (the queue of long actions), as the API reads them: filtered by reach in SQL.
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Database } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { skipLocked } from '../dialect.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { unindexed, listReachedServiceIds, mergeById } from './reach-ranges.js';
import { serviceInListedReach } from './service-reach.js';

export const OPERATION_COLUMNS = [
  'o.id', 'o.kind', 'o.state', 'o.reason', 'o.service_id', 'o.server_id', 'o.requested_channel',
  'o.created_at', 'o.started_at', 'o.finished_at', 'o.parameters', 'o.decision_id',
  // For the view's result, which only the requesting token sees opened (tools/views.ts).
  'o.result', 'o.requested_by_token_id', 'o.requested_by_user_id',
] as const;

/**
 * An operation is reachable when the token requested it (a token always reads its own requests,
 * even after its reach was narrowed), or, unless the reach is `requestedOnly`, when its service
 * is (service restriction), or its server for one on a server alone (server restriction), as for
 * the things themselves.
 */
function operationReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { o: Database['operations'] }, 'o'>) => {
    const ofTeam = eb('o.team_id', '=', reach.teamId);
    const requestedByCaller = eb('o.requested_by_token_id', '=', reach.tokenId);
    if (reach.requestedOnly) return eb.and([ofTeam, requestedByCaller]);
    const conditions = [];
    if (reach.restrictServices) {
      conditions.push(serviceInListedReach(eb, 'o.service_id', reach.tokenId));
    }
    if (reach.restrictServers) {
      const listed = eb.selectFrom('api_token_servers').select('server_id').where('token_id', '=', reach.tokenId);
      conditions.push(eb.or([eb('o.service_id', 'is not', null), eb('o.server_id', 'is', null), eb('o.server_id', 'in', listed)]));
    }
    return conditions.length === 0 ? ofTeam : eb.and([ofTeam, eb.or([requestedByCaller, eb.and(conditions)])]);
  };
}

/**
 * A page of the operations `reach` reaches, in id order. Each read is a range of one index in id
 * order, whatever the token's restriction (test/db/query-plans.test.ts holds the plans):
 * - its own requests alone (`requestedOnly`): operations_requester;
 * - the whole team, or limited to servers only: operations_team (with servers listed, only a
 *   server's own operations on an unlisted server are skipped);
 * - limited to services: the union of three ranges, each read up to the page and merged here:
 *   its own requests, the operations about no service (operations_team_service with no
 *   service), and those of the services it reaches (the same index, one range per service).
 *   One filtered walk of the team instead would read the team's every operation to find an
 *   empty page.
 */
export async function listReachableOperations(db: Kysely<Database>, reach: Reach, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  const range = () => {
    let query = db.selectFrom('operations as o').select(OPERATION_COLUMNS).where('o.team_id', '=', reach.teamId);
    if (after) query = query.where('o.id', '>', after);
    return query;
  };
  const take = <Q extends ReturnType<typeof range>>(query: Q) => query.orderBy('o.id').limit(page.limit + 1).execute();
  if (reach.requestedOnly) return take(range().where('o.requested_by_token_id', '=', reach.tokenId));
  if (!reach.restrictServices) return take(range().where(operationReachable(reach)));
  const listedServers = db.selectFrom('api_token_servers').select('server_id').where('token_id', '=', reach.tokenId);
  let aboutNoService = range().where('o.service_id', 'is', null);
  if (reach.restrictServers) aboutNoService = aboutNoService.where((eb) => eb.or([eb('o.server_id', 'is', null), eb('o.server_id', 'in', listedServers)]));
  // The reached services' operations: one range of operations_team_service per service.
  const reachedServiceIds = await listReachedServiceIds(db, reach.tokenId);
  const ofReachedServices = () => range().where('o.service_id', 'in', reachedServiceIds)
    .orderBy(unindexed('o.id')).limit(page.limit + 1).execute();
  const ranges = await Promise.all([
    take(range().where('o.requested_by_token_id', '=', reach.tokenId)),
    take(aboutNoService),
    reachedServiceIds.length === 0 ? [] : ofReachedServices(),
  ]);
  return mergeById(ranges, page.limit + 1);
}

export async function findReachableOperation(db: Kysely<Database>, reach: Reach, operationId: string) {
  // With its steps, which only get_operation shows (lists leave them out).
  return db.selectFrom('operations as o').select([...OPERATION_COLUMNS, 'o.steps'])
    .where(operationReachable(reach)).where('o.id', '=', operationId).executeTakeFirst();
}

// ---- The queue side: what the engine writes and the worker takes. ----

export type OperationKind = 'start' | 'stop' | 'redeploy' | 'create' | 'delete' | 'create_server' | 'copy' | 'backup' | 'restore' | 'recover' | 'move';
export type OperationRow = Selectable<Database['operations']>;

export interface NewOperation {
  teamId: string;
  kind: OperationKind;
  serviceId: string | null;
  serverId: string | null;
  parameters: object;
  tokenId: string | null;
  /** The member who asked in the panel, when no token did. */
  userId?: string | null;
  channel: string;
  idempotencyKey: string | null;
  fingerprint: string | null;
}

export async function findOperation(db: Kysely<Database>, operationId: string): Promise<OperationRow | undefined> {
  return db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirst();
}

export async function findOperationByIdempotencyKey(db: Kysely<Database>, tokenId: string, key: string) {
  return db.selectFrom('operations').selectAll()
    .where('requested_by_token_id', '=', tokenId).where('idempotency_key', '=', key).executeTakeFirst();
}

/** The queued or running operation on a service, or on a server itself (not on its services). */
export async function findInFlightOperation(db: Kysely<Database>, on: { serviceId: string } | { serverId: string }) {
  let query = db.selectFrom('operations').select(['id', 'kind', 'state']).where('state', 'in', ['queued', 'running']);
  query = 'serviceId' in on
    ? query.where('service_id', '=', on.serviceId)
    : query.where('server_id', '=', on.serverId).where('service_id', 'is', null);
  return query.orderBy('id').executeTakeFirst();
}

export async function insertOperation(db: Kysely<Database>, values: NewOperation, id: string, at: string): Promise<OperationRow> {
  const row: OperationRow = {
    id, team_id: values.teamId, kind: values.kind, service_id: values.serviceId, server_id: values.serverId,
    state: 'queued', reason: null, parameters: JSON.stringify(values.parameters), result: null,
    requested_by_token_id: values.tokenId, requested_channel: values.channel, idempotency_key: values.idempotencyKey,
    request_fingerprint: values.fingerprint, lease_owner: null, lease_expires_at: null, created_at: at,
    started_at: null, finished_at: null, decision_id: null, steps: null, requested_by_user_id: values.userId ?? null,
  };
  await db.insertInto('operations').values(row).execute();
  return row;
}

export async function insertTransition(
  db: Kysely<Database>,
  transition: { id: string; operationId: string; state: string; reason: string | null; at: string; tokenId: string | null; channel: string | null },
): Promise<void> {
  await db.insertInto('operation_transitions').values({
    id: transition.id, operation_id: transition.operationId, state: transition.state, reason: transition.reason,
    at: transition.at, token_id: transition.tokenId, channel: transition.channel,
  }).execute();
}

export async function listTransitions(db: Kysely<Database>, operationId: string) {
  return db.selectFrom('operation_transitions').selectAll().where('operation_id', '=', operationId).orderBy('id').execute();
}

/** A claim candidate, with the node hosting its server (null: no server, or not yet hosted). */
/** `server_node`: the node hosting its server; `docker_host`: set when the server is a Docker engine, which no node hosts. */
export type CandidateRow = OperationRow & { server_node: string | null; docker_host: string | null };

/**
 * What a worker of `node` may look at, oldest first:
 * - queued operations on servers this node hosts, or that no node hosts yet (the first node
 *   to take one of their operations becomes their host: `hostServer`);
 * - running ones whose lease has expired (a dead worker; resumed by the hosting node, failed
 *   by any other: see src/engine/lost-node.ts), or, on a server this node hosts, held by
 *   another worker on this host (whose liveness the caller then checks).
 * On PostgreSQL the rows are locked and rows another node is claiming are skipped.
 */
export async function listClaimCandidates(
  db: Kysely<Database>, owner: string, options: { node: string; now: string; localOwnerPrefix: string; limit: number },
): Promise<CandidateRow[]> {
  const query = db.selectFrom('operations as o').leftJoin('servers as v', 'v.id', 'o.server_id')
    .leftJoin('docker_servers as d', 'd.server_id', 'o.server_id')
    .selectAll('o').select(['v.node as server_node', 'd.docker_host'])
    .where((eb) => {
      const hostedHere = eb.or([eb('o.server_id', 'is', null), eb('v.node', 'is', null), eb('v.node', '=', options.node)]);
      return eb.or([
        eb.and([eb('o.state', '=', 'queued'), hostedHere]),
        eb.and([eb('o.state', '=', 'running'), eb.or([
          eb('o.lease_owner', 'is', null),
          eb('o.lease_expires_at', 'is', null),
          eb('o.lease_expires_at', '<=', options.now),
          eb.and([hostedHere, eb('o.lease_owner', 'like', `${options.localOwnerPrefix}%`), eb('o.lease_owner', '!=', owner)]),
        ])]),
      ]);
    })
    .orderBy('o.id').limit(options.limit);
  return skipLocked(db, query, 'o').execute();
}

/**
 * Makes `node` the host of a server no node hosts yet. False when another node became its host
 * first (its operations are then that node's).
 */
export async function hostServer(db: Kysely<Database>, serverId: string, node: string): Promise<boolean> {
  const result = await db.updateTable('servers').set({ node }).where('id', '=', serverId).where('node', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Compare-and-set: takes the lease only if nobody changed the row since it was read. */
export async function takeLease(
  db: Kysely<Database>, seen: OperationRow, owner: string, leaseExpiresAt: string, at: string,
): Promise<boolean> {
  let query = db.updateTable('operations')
    .set({ state: 'running', lease_owner: owner, lease_expires_at: leaseExpiresAt, started_at: seen.started_at ?? at })
    .where('id', '=', seen.id).where('state', '=', seen.state);
  query = seen.lease_owner === null ? query.where('lease_owner', 'is', null) : query.where('lease_owner', '=', seen.lease_owner);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function renewLease(db: Kysely<Database>, operationId: string, owner: string, leaseExpiresAt: string): Promise<boolean> {
  const result = await db.updateTable('operations').set({ lease_expires_at: leaseExpiresAt })
    .where('id', '=', operationId).where('state', '=', 'running').where('lease_owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends an operation, only if `owner` still holds its lease. */
export async function finishOperation(
  db: Kysely<Database>, operationId: string, owner: string,
  outcome: { state: 'succeeded' | 'failed'; reason: string | null; result: object | null; at: string; steps?: string },
): Promise<boolean> {
  const result = await db.updateTable('operations').set({
    state: outcome.state, reason: outcome.reason, result: outcome.result ? JSON.stringify(outcome.result) : null,
    ...(outcome.steps !== undefined ? { steps: outcome.steps } : {}),
    finished_at: outcome.at, lease_owner: null, lease_expires_at: null,
  }).where('id', '=', operationId).where('state', '=', 'running').where('lease_owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Replaces a succeeded operation's stored result, only if it still is `expected`: of several
 * readers racing to take what the result holds once (a created service's initial credentials),
 * exactly one gets true. One conditional UPDATE: SQLite runs writes one at a time, and
 * PostgreSQL's second UPDATE waits for the first and then finds the row no longer matches.
 */
export async function replaceOperationResult(db: Kysely<Database>, operationId: string, expected: string, replacement: string): Promise<boolean> {
  const result = await db.updateTable('operations').set({ result: replacement })
    .where('id', '=', operationId).where('state', '=', 'succeeded').where('result', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Keeps the steps done so far, while this worker holds the operation: a client polling it sees them as they happen. */
export async function saveOperationSteps(db: Kysely<Database>, operationId: string, owner: string, steps: string): Promise<void> {
  await db.updateTable('operations').set({ steps }).where('id', '=', operationId).where('state', '=', 'running')
    .where('lease_owner', '=', owner).execute();
}

/**
 * Ends a running operation whose lease `seen` shows expired, only if nobody took or renewed it
 * since it was read (the holder may have come back). For operations whose node is gone.
 */
export async function failExpiredOperation(
  db: Kysely<Database>, seen: OperationRow, outcome: { reason: string; at: string },
): Promise<boolean> {
  let query = db.updateTable('operations').set({
    state: 'failed', reason: outcome.reason, result: null, finished_at: outcome.at, lease_owner: null, lease_expires_at: null,
  }).where('id', '=', seen.id).where('state', '=', 'running');
  query = seen.lease_owner === null ? query.where('lease_owner', 'is', null) : query.where('lease_owner', '=', seen.lease_owner);
  query = seen.lease_expires_at === null ? query.where('lease_expires_at', 'is', null) : query.where('lease_expires_at', '=', seen.lease_expires_at);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Ends an operation still queued for `node`, only if nobody took it and the node has not been
 * seen after `unseenSince` (it may have come back since the operation was read); false otherwise.
 */
export async function failQueuedOperation(
  db: Kysely<Database>, operationId: string, node: string, unseenSince: string, outcome: { reason: string; at: string },
): Promise<boolean> {
  const result = await db.updateTable('operations').set({ state: 'failed', reason: outcome.reason, result: null, finished_at: outcome.at })
    .where('id', '=', operationId).where('state', '=', 'queued')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('nodes').select('name').where('name', '=', node).where('last_seen_at', '>', unseenSince))))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
