// Servers, filtered by reach inside SQL: a token limited to servers sees only those.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { newId, nowIso } from '../ids.js';

export const SERVER_COLUMNS = ['v.id', 'v.name', 'v.state', 'v.capacity', 'v.created_at', 'v.reachable'] as const;

/** The reach condition on `servers as v`, for one row at a time: a key lookup in the token's list. */
export function serverReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { v: Database['servers'] }, 'v'>) => {
    const inTeam = eb.and([eb('v.team_id', '=', reach.teamId), eb('v.deleted_at', 'is', null)]);
    if (!reach.restrictServers) return inTeam;
    const listed = eb.selectFrom('api_token_servers as l').select('l.server_id')
      .where('l.token_id', '=', reach.tokenId).whereRef('l.server_id', '=', 'v.id');
    return eb.and([inTeam, eb.exists(listed)]);
  };
}

/**
 * Read by key: the whole team through its index (team_id, id), or the token's list in id order
 * (its primary key) with each server looked up by id. CROSS JOIN keeps that order of tables on
 * SQLite; PostgreSQL plans it as the inner join it is. test/db/query-plans.test.ts holds both.
 */
export async function listReachableServers(db: Kysely<Database>, reach: Reach, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  if (!reach.restrictServers) {
    let team = db.selectFrom('servers as v').select(SERVER_COLUMNS).where('v.team_id', '=', reach.teamId).where('v.deleted_at', 'is', null);
    if (after) team = team.where('v.id', '>', after);
    return team.orderBy('v.id').limit(page.limit + 1).execute();
  }
  let listed = db.selectFrom('api_token_servers as l').crossJoin('servers as v').select(SERVER_COLUMNS)
    .where('l.token_id', '=', reach.tokenId).whereRef('v.id', '=', 'l.server_id')
    .where('v.team_id', '=', reach.teamId).where('v.deleted_at', 'is', null);
  if (after) listed = listed.where('l.server_id', '>', after);
  return listed.orderBy('l.server_id').limit(page.limit + 1).execute();
}

export async function findReachableServer(db: Kysely<Database>, reach: Reach, serverId: string) {
  return db.selectFrom('servers as v').select(SERVER_COLUMNS)
    .where(serverReachable(reach)).where('v.id', '=', serverId).executeTakeFirst();
}

export async function insertServer(
  db: Kysely<Database>,
  values: { teamId: string; name: string; capacity?: number; node?: string | null },
): Promise<string> {
  const id = newId('srv');
  await db.insertInto('servers').values({
    id, team_id: values.teamId, name: values.name, node: values.node ?? null, root_dir: null,
    capacity: values.capacity ?? 20, state: 'ready', created_at: nowIso(), deleted_at: null,
  }).execute();
  return id;
}
