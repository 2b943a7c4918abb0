// Operations of a node that stopped answering. Its lease on a running operation expired and it
// has not come back to resume it. The operation's service lives on that node (the local
// driver's processes run on its machine), so no other node can finish it: any other node ends
// it as failed, with a reason naming the node, exactly once (the row is claimed like any other,
// and the end is a compare-and-set on the lease it saw). The service's own state is left for
// that node to reconcile when it is back (reconcile.ts): its process may well still be running,
// and a team's production is not marked down, or stopped, on a guess.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { failExpiredOperation, type CandidateRow, type OperationRow } from '../db/repositories/operations.js';
import { recordOperationState } from './state-changes.js';

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
