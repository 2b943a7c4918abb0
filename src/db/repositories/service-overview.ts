// What the panel's Overview reads: a page of a team's ERP services (copies under their service),
// the count of its services in each state, and a page of its servers. Each read is bounded by the
// page, whatever the size of the team; copies are fetched for the page's services only, by key.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { serviceIdsNamed, type NamedServices } from './service-name-search.js';

export interface OverviewService { id: string; name: string; state: string; revision: number; server_name: string | null }

/**
 * Services that are no copy, in id order after `afterId`, `limit + 1` rows (the last says there
 * is more); with a search, `searchedTo` when it stopped before the team's end (service-name-search.ts).
 */
export async function listTopLevelServicesPage(
  db: Kysely<Database>, teamId: string, page: { afterId?: string | undefined; search: string; limit: number },
): Promise<NamedServices<OverviewService>> {
  let query = db.selectFrom('erp_services as s').leftJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name', 's.state', 's.revision', 'v.name as server_name'])
    .where('s.team_id', '=', teamId).where('s.parent_id', 'is', null).where('s.deleted_at', 'is', null);
  let searchedTo: string | undefined;
  if (page.search) {
    // The matching ids first (service-name-search.ts); then their rows, by key.
    const matching = await matchingServiceIds(db, teamId, page);
    searchedTo = matching.searchedTo;
    if (matching.services.length === 0) return { services: [], searchedTo };
    query = query.where('s.id', 'in', matching.services);
  }
  if (page.afterId) query = query.where('s.id', '>', page.afterId);
  return { services: await query.orderBy('s.id').limit(page.limit + 1).execute(), searchedTo };
}

/** Ids of the team's services (no copy) whose name contains `search`, in id order after `afterId`, `limit + 1` of them. */
export async function matchingServiceIds(
  db: Kysely<Database>, teamId: string, page: { afterId?: string | undefined; search: string; limit: number },
): Promise<NamedServices<string>> {
  return serviceIdsNamed(db, { teamId, search: page.search, afterId: page.afterId || undefined, limit: page.limit + 1 });
}

/** The live copies of the given services, grouped by service in one pass, at most `perService` each. */
export async function copiesOfServices(
  db: Kysely<Database>, parentIds: string[], perService: number,
): Promise<Map<string, { shown: (OverviewService & { parent_id: string })[]; total: number }>> {
  const grouped = new Map<string, { shown: (OverviewService & { parent_id: string })[]; total: number }>();
  if (parentIds.length === 0) return grouped;
  const rows = await db.selectFrom('erp_services as s').leftJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name', 's.state', 's.revision', 's.parent_id', 'v.name as server_name'])
    .where('s.parent_id', 'in', parentIds).where('s.deleted_at', 'is', null).orderBy('s.parent_id').orderBy('s.id').execute();
  for (const row of rows) {
    const parentId = row.parent_id as string;
    let group = grouped.get(parentId);
    if (!group) grouped.set(parentId, group = { shown: [], total: 0 });
    group.total++;
    if (group.shown.length < perService) group.shown.push({ ...row, parent_id: parentId });
  }
  return grouped;
}

/** How many live services (copies included) the team has in each state, read from one covering index. */
export async function countServicesByState(db: Kysely<Database>, teamId: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('erp_services').select(['state', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('team_id', '=', teamId).where('deleted_at', 'is', null).groupBy('state').execute();
  return new Map(rows.map((row) => [row.state, Number(row.count)]));
}

/**
 * The team's unhealthy services and copies (one range of erp_services_team_health), longest
 * unhealthy first, at most `limit` + 1. The range is sorted whole: unhealthy rows are few but in
 * an outage, and then the longest unhealthy ones still come first.
 */
export async function listUnhealthyServices(db: Kysely<Database>, teamId: string, limit: number) {
  return db.selectFrom('erp_services as s').leftJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name', 's.state', 's.revision', 's.parent_id', 's.health_since', 'v.name as server_name'])
    .where('s.team_id', '=', teamId).where('s.health', '=', 'unhealthy').where('s.deleted_at', 'is', null)
    .orderBy('s.health_since').orderBy('s.id').limit(limit + 1).execute();
}

export async function listServersPage(
  db: Kysely<Database>, teamId: string, page: { afterId?: string | undefined; limit: number },
) {
  let query = db.selectFrom('servers').select(['id', 'name', 'state', 'capacity', 'reachable', 'reachable_since'])
    .where('team_id', '=', teamId).where('deleted_at', 'is', null);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/** One live service (or copy) of the team, with its server's name, for the panel's service page. */
export async function findTeamService(db: Kysely<Database>, teamId: string, serviceId: string) {
  return db.selectFrom('erp_services as s').leftJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name', 's.state', 's.state_reason', 's.revision', 's.parent_id', 's.updated_at', 's.port', 's.published_host', 's.proxy_upstream', 's.server_id', 'v.name as server_name'])
    .where('s.team_id', '=', teamId).where('s.id', '=', serviceId).where('s.deleted_at', 'is', null).executeTakeFirst();
}

/** The latest operations on a service, newest first: one range of operations_team_service. */
export async function latestOperationsOfService(db: Kysely<Database>, teamId: string, serviceId: string, limit: number) {
  return db.selectFrom('operations').select(['id', 'kind', 'state', 'reason', 'requested_channel', 'created_at', 'finished_at'])
    .where('team_id', '=', teamId).where('service_id', '=', serviceId).orderBy('id', 'desc').limit(limit).execute();
}

/** The team's Docker servers a service on `serverId` could move to (move_erp_service checks the rest): not that one, not lost, by name. */
export async function moveTargetsOf(db: Kysely<Database>, teamId: string, serverId: string): Promise<{ id: string; name: string }[]> {
  return db.selectFrom('servers as v').innerJoin('docker_servers as d', 'd.server_id', 'v.id').select(['v.id', 'v.name'])
    .where('v.team_id', '=', teamId).where('v.deleted_at', 'is', null).where('v.state', '!=', 'lost').where('v.id', '!=', serverId)
    .orderBy('v.name').limit(200).execute();
}
