// ERP services and copies. Every query is filtered by the caller's reach inside SQL: a token
// limited to services sees those and their copies, and nothing else exists for it.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database, ServiceHealth, ServiceState } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { fastPathFor } from '../connect.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { newId, nowIso } from '../ids.js';
import { indexServiceNames } from './service-name-search.js';

export const SERVICE_COLUMNS = [
  's.id', 's.name', 's.server_id', 's.parent_id', 's.state', 's.revision', 's.port', 's.published_host', 's.proxy_upstream', 's.created_at', 's.updated_at',
  's.health', 's.health_since',
] as const;

/**
 * The reach condition on `erp_services as s`, for one row at a time: a token limited to services
 * reaches a row whose own id, or whose parent's, is in its list. Both are key lookups in the
 * list's primary key, so checking a row never reads the whole list.
 */
export function serviceReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { s: Database['erp_services'] }, 's'>) => {
    const inTeam = eb.and([eb('s.team_id', '=', reach.teamId), eb('s.deleted_at', 'is', null)]);
    if (!reach.restrictServices) return inTeam;
    const listed = eb.selectFrom('api_token_services as l').select('l.service_id')
      .where('l.token_id', '=', reach.tokenId).where('l.service_id', 'in', [eb.ref('s.id'), eb.ref('s.parent_id')]);
    return eb.and([inTeam, eb.exists(listed)]);
  };
}

export async function listReachableServices(
  db: Kysely<Database>, reach: Reach, page: PageRequest, parentId: string | null, health?: ServiceHealth,
) {
  const after = decodeCursor(page.cursor);
  const fast = fastPathFor(db);
  if (fast) {
    // One prepared statement per shape of the query; the values are bound at each call.
    const key = `services.listReachableServices:${reach.restrictServices ? 'listed' : 'team'}:${parentId === null ? 'top' : 'copies'}:${after ? 'after' : 'first'}${health ? ':health' : ''}`;
    return fast.query(key, (kysely, value) => reachableServices(
      kysely,
      { ...reach, teamId: value('teamId'), tokenId: value('tokenId') },
      value<number>('limit'),
      parentId === null ? null : value('parentId'),
      after === undefined ? undefined : value('after'),
      health === undefined ? undefined : value<ServiceHealth>('health'),
    )).all({ teamId: reach.teamId, tokenId: reach.tokenId, limit: page.limit + 1, parentId, after, health });
  }
  return reachableServices(db, reach, page.limit + 1, parentId, after, health).execute();
}

/**
 * Each shape reads by key, never the team's other services:
 * - top level, whole team: the team's index (team_id, id), in order;
 * - top level, listed services: the token's list in id order (its primary key), each service
 *   looked up by id. A top-level service has no parent, so only its own id can be listed;
 * - copies of one service: the parent's index (parent_id, id), in order, each copy checked by key.
 * test/db/query-plans.test.ts holds every shape to its plan.
 */
function reachableServices(
  db: Kysely<Database>, reach: Reach, limit: number, parentId: string | null, after: string | undefined, health?: ServiceHealth,
) {
  if (parentId !== null) {
    let copies = db.selectFrom('erp_services as s').select(SERVICE_COLUMNS)
      .where('s.parent_id', '=', parentId).where(serviceReachable(reach));
    if (after !== undefined) copies = copies.where('s.id', '>', after);
    if (health !== undefined) copies = copies.where('s.health', '=', health);
    return copies.orderBy('s.id').limit(limit);
  }
  if (!reach.restrictServices) {
    // With a health: the range (team_id, health) of erp_services_team_health, in id order.
    let team = db.selectFrom('erp_services as s').select(SERVICE_COLUMNS)
      .where('s.team_id', '=', reach.teamId).where('s.deleted_at', 'is', null).where('s.parent_id', 'is', null);
    if (health !== undefined) team = team.where('s.health', '=', health);
    if (after !== undefined) team = team.where('s.id', '>', after);
    return team.orderBy('s.id').limit(limit);
  }
  // CROSS JOIN keeps this order of tables on SQLite (list first, then each service by id), which
  // its planner would otherwise not choose; PostgreSQL plans it as the inner join it is.
  let listed = db.selectFrom('api_token_services as l').crossJoin('erp_services as s').select(SERVICE_COLUMNS)
    .where('l.token_id', '=', reach.tokenId).whereRef('s.id', '=', 'l.service_id')
    .where('s.team_id', '=', reach.teamId).where('s.deleted_at', 'is', null).where('s.parent_id', 'is', null);
  if (after !== undefined) listed = listed.where('l.service_id', '>', after);
  if (health !== undefined) listed = listed.where('s.health', '=', health);
  return listed.orderBy('l.service_id').limit(limit);
}

export async function findReachableService(db: Kysely<Database>, reach: Reach, serviceId: string) {
  return db.selectFrom('erp_services as s').select(SERVICE_COLUMNS)
    .where(serviceReachable(reach)).where('s.id', '=', serviceId).executeTakeFirst();
}

export async function insertService(
  db: Kysely<Database>,
  values: { teamId: string; serverId: string; name: string; parentId?: string | null; state?: ServiceState; app?: string | null },
): Promise<string> {
  const id = newId('svc');
  const now = nowIso();
  await db.insertInto('erp_services').values({
    id, team_id: values.teamId, server_id: values.serverId, parent_id: values.parentId ?? null, name: values.name,
    state: values.state ?? 'stopped', revision: 1, port: null, pid: null, outgoing_smtp: null, mail_username: null,
    mail_password_hash: null, state_reason: null, created_at: now, updated_at: now, deleted_at: null, app: values.app ?? null,
  }).execute();
  await indexServiceNames(db, [id]);
  return id;
}
