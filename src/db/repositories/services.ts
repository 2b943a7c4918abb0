// ERP services and copies. Every query is filtered by the caller's reach inside SQL: a token
// limited to services sees those and their copies, and nothing else exists for it.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database, ServiceState } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { fastPathFor } from '../connect.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { newId, nowIso } from '../ids.js';

export const SERVICE_COLUMNS = [
  's.id', 's.name', 's.server_id', 's.parent_id', 's.state', 's.revision', 's.port', 's.published_host', 's.created_at', 's.updated_at',
] as const;

/** The reach condition on `erp_services as s`. */
export function serviceReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { s: Database['erp_services'] }, 's'>) => {
    const inTeam = eb.and([eb('s.team_id', '=', reach.teamId), eb('s.deleted_at', 'is', null)]);
    if (!reach.restrictServices) return inTeam;
    const listed = eb.selectFrom('api_token_services').select('service_id').where('token_id', '=', reach.tokenId);
    return eb.and([inTeam, eb.or([eb('s.id', 'in', listed), eb('s.parent_id', 'in', listed)])]);
  };
}

export async function listReachableServices(db: Kysely<Database>, reach: Reach, page: PageRequest, parentId: string | null) {
  const after = decodeCursor(page.cursor);
  const fast = fastPathFor(db);
  if (fast) {
    // One prepared statement per shape of the query; the values are bound at each call.
    const key = `services.listReachableServices:${reach.restrictServices ? 'listed' : 'team'}:${parentId === null ? 'top' : 'copies'}:${after ? 'after' : 'first'}`;
    return fast.query(key, (kysely, value) => reachableServices(
      kysely,
      { ...reach, teamId: value('teamId'), tokenId: value('tokenId') },
      value<number>('limit'),
      parentId === null ? null : value('parentId'),
      after === undefined ? undefined : value('after'),
    )).all({ teamId: reach.teamId, tokenId: reach.tokenId, limit: page.limit + 1, parentId, after });
  }
  return reachableServices(db, reach, page.limit + 1, parentId, after).execute();
}

function reachableServices(db: Kysely<Database>, reach: Reach, limit: number, parentId: string | null, after: string | undefined) {
  let query = db.selectFrom('erp_services as s').select(SERVICE_COLUMNS).where(serviceReachable(reach));
  query = parentId === null ? query.where('s.parent_id', 'is', null) : query.where('s.parent_id', '=', parentId);
  if (after !== undefined) query = query.where('s.id', '>', after);
  return query.orderBy('s.id').limit(limit);
}

export async function findReachableService(db: Kysely<Database>, reach: Reach, serviceId: string) {
  return db.selectFrom('erp_services as s').select(SERVICE_COLUMNS)
    .where(serviceReachable(reach)).where('s.id', '=', serviceId).executeTakeFirst();
}

export async function insertService(
  db: Kysely<Database>,
  values: { teamId: string; serverId: string; name: string; parentId?: string | null; state?: ServiceState },
): Promise<string> {
  const id = newId('svc');
  const now = nowIso();
  await db.insertInto('erp_services').values({
    id, team_id: values.teamId, server_id: values.serverId, parent_id: values.parentId ?? null, name: values.name,
    state: values.state ?? 'stopped', revision: 1, port: null, pid: null, outgoing_smtp: null, mail_username: null,
    mail_password_hash: null, state_reason: null, created_at: now, updated_at: now, deleted_at: null,
  }).execute();
  return id;
}
