// For a token limited to services, a list of rows about an optional service (operations,
// decisions) is the union of a few index ranges, each read in id order up to the page and merged
// here, instead of one walk of the team's rows filtered row by row (which reads the whole team to
// find an empty page). The rule of reach itself is service-reach.ts; these are its ranges.
import type { Kysely } from 'kysely';
import { sql } from '../kysely-runtime.js';
import type { Database } from '../tables.js';

/** The services a token limited to services reaches: its listed ones and their copies, each read by key. */
export async function listReachedServiceIds(db: Kysely<Database>, tokenId: string): Promise<string[]> {
  const rows = await db.selectFrom('api_token_services').select('service_id').where('token_id', '=', tokenId)
    .unionAll(db.selectFrom('erp_services as c').innerJoin('api_token_services as l', 'l.service_id', 'c.parent_id')
      .select('c.id as service_id').where('l.token_id', '=', tokenId))
    .execute();
  return rows.map((row) => row.service_id);
}

/**
 * `column || ''`: the same value, which no index serves. The reached services' range is ordered
 * (and a decision's state compared) through it, since given `id` (or `state`) itself SQLite's
 * planner, without ANALYZE statistics as `serve` runs, rather walks the whole team in that
 * index's order than reads one range per reached service and sorts those few rows.
 */
export const unindexed = (column: string) => sql<string>`${sql.ref(column)} || ''`;

/** The first `count` rows of several ranges, each in id order, without repeats. */
export function mergeById<Row extends { id: string }>(ranges: Row[][], count: number): Row[] {
  const merged = new Map(ranges.flat().map((row) => [row.id, row]));
  return [...merged.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, count);
}
