// Runs one claimed operation and records how it ended: the operation, its transition, the
// service's (or server's) new state and their events, in one write transaction, and only if
// this worker still holds the lease (if it lost it, the new holder finishes the job).
import type { Db } from '../db/connect.js';
import { nowIso } from '../db/ids.js';
import { finishOperation, type OperationKind, type OperationRow } from '../db/repositories/operations.js';
import { ACTIONS, copiesToDelete, type ActionResult } from './actions.js';
import { DriverError, type ServiceDriver } from './driver.js';
import { loadServiceSpec } from './service-spec.js';
import { changeServerState, changeServiceState, recordOperationState } from './state-changes.js';
import { inWriteTransaction } from './write-transaction.js';

export interface PerformDeps {
  db: Db;
  driver: ServiceDriver;
  onError(error: unknown, context: string): void;
}

/** An operation interrupted this many times (its worker died each time) is given up. */
export const MAX_ATTEMPTS = 3;

const INTERNAL_REASON = 'The operation failed because of an internal error; it has been logged. Try again.';

type Outcome = { ok: true; value: ActionResult } | { ok: false; reason: string; portUnusable: boolean };

export async function performOperation(deps: PerformDeps, operation: OperationRow, owner: string, attempt: number): Promise<void> {
  const outcome = attempt > MAX_ATTEMPTS ? await giveUp(deps, operation, attempt) : await attemptAction(deps, operation);
  await inWriteTransaction(deps.db.kysely, async (trx) => {
    const at = nowIso();
    const finished = await finishOperation(trx, operation.id, owner, {
      state: outcome.ok ? 'succeeded' : 'failed', reason: outcome.ok ? null : outcome.reason,
      result: outcome.ok ? outcome.value.result : null, at,
    });
    if (!finished) return;
    await recordOperationState(trx, operation, outcome.ok ? 'succeeded' : 'failed', outcome.ok ? null : outcome.reason, at);
    const cause = { kind: operation.kind as OperationKind, operationId: operation.id };
    if (outcome.ok) {
      for (const copyId of outcome.value.alsoDeleted ?? []) {
        await changeServiceState(trx, copyId, { state: 'stopped', pid: null, port: null, deleted: true }, cause, at);
      }
      if (outcome.value.service && operation.service_id) await changeServiceState(trx, operation.service_id, outcome.value.service, cause, at);
      if (outcome.value.server && operation.server_id) {
        await changeServerState(trx, operation.server_id, outcome.value.server, operation.id, at, 'server.ready');
      }
      return;
    }
    if (operation.kind === 'create_server' && operation.server_id) {
      await changeServerState(trx, operation.server_id, { state: 'failed' }, operation.id, at, 'server.failed');
    } else if (operation.service_id) {
      for (const copyId of operation.kind === 'delete' ? copiesToDelete(operation) : []) {
        await changeServiceState(trx, copyId, { state: 'failed', reason: outcome.reason, pid: null }, cause, at);
      }
      const startFailed = operation.kind === 'start' || operation.kind === 'redeploy';
      await changeServiceState(trx, operation.service_id, {
        state: 'failed', reason: outcome.reason,
        ...(startFailed ? { pid: null } : {}),
        ...(outcome.portUnusable ? { port: null } : {}),
      }, cause, at);
    }
  });
}

async function attemptAction(deps: PerformDeps, operation: OperationRow): Promise<Outcome> {
  const action = ACTIONS[operation.kind as OperationKind];
  try {
    if (!action) throw new Error(`no action for operation kind ${operation.kind}`);
    return { ok: true, value: await action({ db: deps.db.kysely, driver: deps.driver, operation }) };
  } catch (error) {
    if (error instanceof DriverError) return { ok: false, reason: error.reason, portUnusable: error.portUnusable };
    deps.onError(error, `operation ${operation.id} (${operation.kind})`);
    return { ok: false, reason: INTERNAL_REASON, portUnusable: false };
  }
}

/** Stops whatever the operation may have left half-running, then fails it. */
async function giveUp(deps: PerformDeps, operation: OperationRow, attempt: number): Promise<Outcome> {
  if (operation.service_id && operation.kind !== 'create') {
    const spec = await loadServiceSpec(deps.db.kysely, operation.service_id);
    if (spec) await deps.driver.stop(spec).catch((error: unknown) => deps.onError(error, `giving up ${operation.id}`));
  }
  return {
    ok: false, portUnusable: false,
    reason: `The operation was interrupted ${attempt - 1} times (the control plane stopped while running it), so it was given up. ` +
      'Run it again.',
  };
}
