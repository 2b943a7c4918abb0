// Operations (the queue of long actions), as the API reads them: filtered by reach in SQL.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { decodeCursor, type PageRequest } from '../pagination.js';

export const OPERATION_COLUMNS = [
  'o.id', 'o.kind', 'o.state', 'o.reason', 'o.service_id', 'o.server_id', 'o.requested_channel',
  'o.created_at', 'o.started_at', 'o.finished_at',
] as const;

/**
 * An operation on a service is reachable when its service is (service restriction); one on a
 * server alone when its server is (server restriction), as for the things themselves.
 */
function operationReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { o: Database['operations'] }, 'o'>) => {
    const conditions = [eb('o.team_id', '=', reach.teamId)];
    if (reach.restrictServices) {
      const listed = eb.selectFrom('api_token_services').select('service_id').where('token_id', '=', reach.tokenId);
      const copiesOfListed = eb.selectFrom('erp_services').select('id').where('parent_id', 'in', listed);
      conditions.push(eb.or([
        eb('o.service_id', 'is', null),
        eb('o.service_id', 'in', listed),
        eb('o.service_id', 'in', copiesOfListed),
      ]));
    }
    if (reach.restrictServers) {
      const listed = eb.selectFrom('api_token_servers').select('server_id').where('token_id', '=', reach.tokenId);
      conditions.push(eb.or([eb('o.service_id', 'is not', null), eb('o.server_id', 'is', null), eb('o.server_id', 'in', listed)]));
    }
    return eb.and(conditions);
  };
}

export async function listReachableOperations(db: Kysely<Database>, reach: Reach, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  let query = db.selectFrom('operations as o').select(OPERATION_COLUMNS).where(operationReachable(reach));
  if (after) query = query.where('o.id', '>', after);
  return query.orderBy('o.id').limit(page.limit + 1).execute();
}

export async function findReachableOperation(db: Kysely<Database>, reach: Reach, operationId: string) {
  return db.selectFrom('operations as o').select(OPERATION_COLUMNS)
    .where(operationReachable(reach)).where('o.id', '=', operationId).executeTakeFirst();
}
