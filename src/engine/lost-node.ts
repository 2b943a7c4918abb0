// Operations of a node that stopped answering. Its lease on a running operation expired and it
// has not come back to resume it. The operation's service lives on that node (the local
// driver's processes run on its machine), so no other node can finish it: any other node ends
// it as failed, with a reason naming the node, exactly once (the row is claimed like any other,
// and the end is a compare-and-set on the lease it saw). The service's own state is left for
// that node to reconcile when it is back (reconcile.ts): its process may well still be running,
// and a team's production is not marked down, or stopped, on a guess.
// Operations still queued for such a node are failed the same way once it has not been seen for
// the node-gone bound (node-heartbeat.ts): they never ran, so nothing of the service changed.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { QueuedForNode } from '../db/repositories/nodes.js';
import { failExpiredOperation, failQueuedOperation, type CandidateRow, type OperationRow } from '../db/repositories/operations.js';
import { backupIdOf } from './actions/backup.js';
import { endBackupState, recordOperationState } from './state-changes.js';

export function lostNodeReason(node: string, leaseExpiredAt: string | null): string {
  return `Node "${node}", which hosts this server and was running the operation, stopped answering ` +
    `(its lease expired${leaseExpiredAt ? ` at ${leaseExpiredAt}` : ''}). Its ERP services run on that node, so no ` +
    `other node can finish the operation; "${node}" checks what really runs when it is back. Try again then.`;
}

/** Fails `seen` (running, lease expired, hosted by `node`, another node); false if someone else acted first. */
export async function failOperationOfLostNode(trx: Kysely<Database>, seen: CandidateRow, node: string, at: string): Promise<boolean> {
  const reason = lostNodeReason(node, seen.lease_expires_at);
  if (!(await failExpiredOperation(trx, seen, { reason, at }))) return false;
  const { server_node: _hostedBy, docker_host: _engine, ...row } = seen;
  const operation: OperationRow = { ...row, state: 'failed', reason, lease_owner: null, lease_expires_at: null, finished_at: at };
  await recordOperationState(trx, operation, 'failed', reason, at);
  return true;
}

export function queuedForLostNodeReason(node: string, lastSeenAt: string | null, goneAfterMs: number): string {
  return `Node "${node}", which hosts this server, did not take the operation: it has not been seen ` +
    `${lastSeenAt ? `since ${lastSeenAt}` : 'since the operation was queued'}, more than ${durationOf(goneAfterMs)} ` +
    `(TEAMINFRA_NODE_GONE_MS), so the operation was not run. Its ERP services run on that node, so no other node can run it; ` +
    `"${node}" checks what really runs when it is back. Try again then.`;
}

/** Fails `queued` (still queued, for a node unseen for `goneAfterMs`); false if it was taken meanwhile. */
export async function failOperationQueuedForLostNode(
  trx: Kysely<Database>, queued: QueuedForNode, goneAfterMs: number, unseenSince: string, at: string,
): Promise<boolean> {
  const reason = queuedForLostNodeReason(queued.server_node, queued.node_last_seen_at, goneAfterMs);
  if (!(await failQueuedOperation(trx, queued.id, queued.server_node, unseenSince, { reason, at }))) return false;
  const { server_node: _hostedBy, node_last_seen_at: _seen, ...row } = queued;
  await recordOperationState(trx, { ...row, state: 'failed', reason, finished_at: at }, 'failed', reason, at);
  // Listed as pending since the request: it ends with its operation.
  if (row.kind === 'backup') await endBackupState(trx, backupIdOf(row.parameters), { state: 'failed', reason, at });
  return true;
}

function durationOf(ms: number): string {
  const [count, unit] = ms % 60_000 === 0 ? [ms / 60_000, 'minute'] : ms % 1000 === 0 ? [ms / 1000, 'second'] : [ms, 'millisecond'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
