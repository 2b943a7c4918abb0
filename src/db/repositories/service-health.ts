// What the health watcher reads and writes (src/health/): the services it watches, a page at a
// time in id order, with their server and their counts; the counts themselves; a service's or a
// server's health, each changed by a compare-and-set on the value read, so that a change of state
// made meanwhile (an operation, reconciliation) is never overwritten by a check that predates it.
import type { Kysely } from 'kysely';
import type { Database, ServiceHealth, ServiceHealthChecksTable, ServiceState } from '../tables.js';

/** Running services (checked) and failed ones (their engine may still restart them), with their server. */
export async function listWatchedServices(db: Kysely<Database>, afterId: string, limit: number) {
  return db.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
    .leftJoin('docker_servers as d', 'd.server_id', 'v.id')
    .leftJoin('service_health_checks as h', 'h.service_id', 's.id')
    .select([
      's.id', 's.team_id', 's.name', 's.revision', 's.port', 's.pid', 's.outgoing_smtp', 's.parent_id', 's.app', 's.state', 's.published_host', 's.proxy_upstream',
      's.health', 's.health_since', 'v.id as server_id', 'v.root_dir', 'v.reachable', 'd.docker_host', 'd.image',
      'h.failed_checks', 'h.first_failed_at', 'h.last_answer', 'h.restart_count', 'h.restarts_seen', 'h.crash_loop_since',
    ])
    .where('s.id', '>', afterId).where('s.deleted_at', 'is', null).where('s.state', 'in', ['running', 'failed'])
    .orderBy('s.id').limit(limit).execute();
}

/** How many services a pass watches (to spread its pages over the interval). */
export async function countWatchedServices(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('erp_services').select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('deleted_at', 'is', null).where('state', 'in', ['running', 'failed']).executeTakeFirstOrThrow();
  return Number(row.count);
}

export type WatchedService = Awaited<ReturnType<typeof listWatchedServices>>[number];

type Counts = Omit<ServiceHealthChecksTable, 'service_id'>;
const NO_COUNTS: Counts = {
  failed_checks: 0, first_failed_at: null, last_answer: null, restart_count: null, restarts_seen: '[]', crash_loop_since: null,
};

/** Writes some of the watcher's counts of a service, the others kept (the row is made the first time). */
export async function saveHealthChecks(db: Kysely<Database>, serviceId: string, counts: Partial<Counts>): Promise<void> {
  await db.insertInto('service_health_checks').values({ service_id: serviceId, ...NO_COUNTS, ...counts })
    .onConflict((conflict) => conflict.column('service_id').doUpdateSet(counts)).execute();
}

/** Sets a service's health if it still is `from` and still in `state`; false when something changed it meanwhile. */
export async function changeServiceHealth(
  db: Kysely<Database>, serviceId: string, seen: { health: ServiceHealth; state: ServiceState }, to: ServiceHealth, since: string,
): Promise<boolean> {
  const result = await db.updateTable('erp_services').set({ health: to, health_since: since })
    .where('id', '=', serviceId).where('health', '=', seen.health).where('state', '=', seen.state).where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every Docker server: the engines the watcher pings. */
export async function listDockerServers(db: Kysely<Database>) {
  return db.selectFrom('servers as v').innerJoin('docker_servers as d', 'd.server_id', 'v.id')
    .select(['v.id', 'v.team_id', 'v.name', 'v.root_dir', 'v.reachable', 'v.reachable_since', 'v.failed_pings', 'd.docker_host', 'd.image'])
    .where('v.deleted_at', 'is', null).orderBy('v.id').execute();
}

export type PingedServer = Awaited<ReturnType<typeof listDockerServers>>[number];

/** Sets a server's reachability and failed pings if they are still what was read; false otherwise. */
export async function changeServerReachability(
  db: Kysely<Database>, serverId: string, seen: { reachable: number; failed_pings: number },
  to: { reachable: number; failed_pings: number; reachable_since?: string },
): Promise<boolean> {
  const result = await db.updateTable('servers').set(to)
    .where('id', '=', serverId).where('reachable', '=', seen.reachable).where('failed_pings', '=', seen.failed_pings)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Starts, redeploys and restores that succeeded since `since`, by service: the ones a crash loop is also told in. */
export async function listRecentlyStarted(db: Kysely<Database>, since: string) {
  return db.selectFrom('operations').select(['id', 'service_id', 'finished_at'])
    .where('finished_at', '>=', since).where('state', '=', 'succeeded').where('kind', 'in', ['start', 'redeploy', 'restore'])
    .orderBy('finished_at').execute();
}

/** Adds what the watcher saw to an operation's result (its other members kept). */
export async function addToOperationResult(db: Kysely<Database>, operationId: string, added: Record<string, unknown>): Promise<void> {
  const row = await db.selectFrom('operations').select('result').where('id', '=', operationId).executeTakeFirst();
  if (!row) return;
  const result = { ...(row.result ? JSON.parse(row.result) as Record<string, unknown> : {}), ...added };
  await db.updateTable('operations').set({ result: JSON.stringify(result) }).where('id', '=', operationId).execute();
}
