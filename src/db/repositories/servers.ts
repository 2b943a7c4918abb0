// Servers, filtered by reach inside SQL: a token limited to servers sees only those.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../tables.js';
import type { Reach } from '../../core/principal.js';
import { decodeCursor, type PageRequest } from '../pagination.js';
import { newId, nowIso } from '../ids.js';

export const SERVER_COLUMNS = ['v.id', 'v.name', 'v.state', 'v.capacity', 'v.created_at'] as const;

export function serverReachable(reach: Reach) {
  return (eb: ExpressionBuilder<Database & { v: Database['servers'] }, 'v'>) => {
    const inTeam = eb.and([eb('v.team_id', '=', reach.teamId), eb('v.deleted_at', 'is', null)]);
    if (!reach.restrictServers) return inTeam;
    const listed = eb.selectFrom('api_token_servers').select('server_id').where('token_id', '=', reach.tokenId);
    return eb.and([inTeam, eb('v.id', 'in', listed)]);
  };
}

export async function listReachableServers(db: Kysely<Database>, reach: Reach, page: PageRequest) {
  const after = decodeCursor(page.cursor);
  let query = db.selectFrom('servers as v').select(SERVER_COLUMNS).where(serverReachable(reach));
  if (after) query = query.where('v.id', '>', after);
  return query.orderBy('v.id').limit(page.limit + 1).execute();
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
