// Nodes as the shared database sees them: when each was last seen running its engine. The only
// evidence one node has that another is gone for good, and not merely busy or restarting.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import type { OperationRow } from './operations.js';

export async function markNodeSeen(db: Kysely<Database>, node: string, at: string): Promise<void> {
  await db.insertInto('nodes').values({ name: node, last_seen_at: at })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ last_seen_at: at })).execute();
}

/** A queued operation, the node hosting its server, and when that node was last seen (null: never). */
export type QueuedForNode = OperationRow & { server_node: string; node_last_seen_at: string | null };

/**
 * Operations queued before `before` on servers hosted by a node other than `node` that has
 * not been seen since `before` either (or ever): they have waited the whole bound for it.
 */
export async function listQueuedForUnseenNodes(
  db: Kysely<Database>, options: { node: string; before: string; limit: number },
): Promise<QueuedForNode[]> {
  const rows = await db.selectFrom('operations as o').innerJoin('servers as v', 'v.id', 'o.server_id')
    .leftJoin('nodes as n', 'n.name', 'v.node')
    .selectAll('o').select(['v.node as server_node', 'n.last_seen_at as node_last_seen_at'])
    .where('o.state', '=', 'queued').where('o.created_at', '<=', options.before)
    .where('v.node', 'is not', null).where('v.node', '!=', options.node)
    .where((eb) => eb.or([eb('n.last_seen_at', 'is', null), eb('n.last_seen_at', '<=', options.before)]))
    .orderBy('o.id').limit(options.limit).execute();
  return rows as QueuedForNode[];
}
