// Runs one claimed operation and records how it ended: the operation, its transition, the
// service's (or server's, or backup's) new state and their events, in one write transaction,
// and only if this worker still holds the lease (if it lost it, the new holder finishes the job).
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/tables.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { nowIso } from '../db/ids.js';
import { finishOperation, saveOperationSteps, type OperationKind, type OperationRow } from '../db/repositories/operations.js';
import { ACTIONS, copiesToDelete } from './actions.js';
import type { ActionResult } from './actions/action-types.js';
import { backupIdOf } from './actions/backup.js';
import { abandonMove, moveParametersOf } from './actions/move.js';
import { removeWhatRecoveryMade } from './actions/recover.js';
import { restoreParametersOf } from './actions/restore.js';
import { DriverError, type ServiceDriver } from './driver.js';
import { loadServiceSpec } from './service-spec.js';
import {
  changeServerState, changeServiceState, endBackupState, recordOperationState, updateService, writeRestoreEvent, type ServiceChange,
} from './state-changes.js';
import { inWriteTransaction } from './write-transaction.js';
import { StepLog } from './operation-steps.js';

export interface PerformDeps {
  db: Db;
  driver: ServiceDriver;
  onError(error: unknown, context: string): void;
  /** `serve --docker-host`: a server created through the API is made a Docker server on this engine. */
  newServersDockerHost?: string | null;
  /** Opens the team's off-site destination and backup key when a restore reads a backup from off-site (src/offsite). */
  secrets?: SecretBox;
}

/** An operation interrupted this many times (its worker died each time) is given up. */
export const MAX_ATTEMPTS = 3;

const INTERNAL_REASON = 'The operation failed because of an internal error; it has been logged. Try again.';

/** Kinds that may leave a process half-started when interrupted; giving one up stops the service. */
const MAY_LEAVE_A_PROCESS = new Set<string>(['start', 'stop', 'redeploy', 'delete']);

type Failure = { ok: false; reason: string; portUnusable: boolean };
type Outcome = { ok: true; value: ActionResult } | Failure;

export async function performOperation(
  deps: PerformDeps, operation: OperationRow, owner: string, attempt: number, abandoned?: AbortSignal,
): Promise<void> {
  // The steps so far are kept as they happen, one write after another, by this worker only.
  let saving = Promise.resolve();
  const steps = new StepLog((serialized) => {
    saving = saving.then(() => saveOperationSteps(deps.db.kysely, operation.id, owner, serialized))
      .catch((error: unknown) => deps.onError(error, `keeping the steps of ${operation.id}`));
  });
  if (attempt > 1 && attempt <= MAX_ATTEMPTS) steps.note(`Resumed after an interruption (attempt ${attempt})`);
  const outcome = attempt > MAX_ATTEMPTS ? await giveUp(deps, operation, attempt, steps) : await attemptAction(deps, operation, steps);
  await saving;
  // The process stopped waiting for it (worker.close): whatever it ended with (often the engine's
  // connections being closed under it) is not its outcome; the next start resumes it.
  if (abandoned?.aborted) return;
  // Asked of the driver before the transaction: a failed restore leaves the service as it really is.
  const afterFailedRestore = !outcome.ok && operation.kind === 'restore' ? await serviceAfterFailedRestore(deps, operation, outcome.reason) : undefined;
  // A redeploy that failed may have left the previous revision serving (the Docker driver starts the new one beside it).
  // So may a move that failed (it is started again on its old server).
  const stillServing = !outcome.ok && (operation.kind === 'redeploy' || operation.kind === 'move') ? await runningNow(deps, operation) : undefined;
  await inWriteTransaction(deps.db.kysely, async (trx) => {
    const at = nowIso();
    const finished = await finishOperation(trx, operation.id, owner, {
      state: outcome.ok ? 'succeeded' : 'failed', reason: outcome.ok ? null : outcome.reason,
      result: outcome.ok ? outcome.value.result : null, at, steps: steps.serialized(),
    });
    if (!finished) return;
    await recordOperationState(trx, operation, outcome.ok ? 'succeeded' : 'failed', outcome.ok ? null : outcome.reason, at);
    if (outcome.ok) await recordSuccess(trx, operation, outcome.value, at);
    else if (stillServing) await updateService(trx, operation.service_id as string, { ...stillServing, reason: outcome.reason }, at);
    else await recordFailure(trx, operation, outcome, afterFailedRestore, at);
  });
}

async function recordSuccess(trx: Kysely<Database>, operation: OperationRow, value: ActionResult, at: string): Promise<void> {
  const cause = { kind: operation.kind as OperationKind, operationId: operation.id };
  for (const copyId of value.alsoDeleted ?? []) {
    await changeServiceState(trx, copyId, { state: 'stopped', pid: null, port: null, deleted: true }, cause, at);
  }
  if (value.backup) {
    const { file } = value.backup;
    await endBackupState(trx, value.backup.id, { state: 'completed', filePath: file.path, sizeBytes: file.sizeBytes, sha256: file.sha256, at });
  }
  if (value.service && operation.service_id) {
    if (operation.kind === 'restore') {
      // restore.completed is the event of this change.
      await updateService(trx, operation.service_id, value.service, at);
      await writeRestoreEvent(trx, operation, restoreParametersOf(operation.parameters).backup_id, null, at);
    } else {
      await changeServiceState(trx, operation.service_id, value.service, cause, at);
    }
  }
  if (value.server && operation.server_id) {
    await changeServerState(trx, operation.server_id, value.server, operation.id, at, 'server.ready');
  }
}

async function recordFailure(
  trx: Kysely<Database>, operation: OperationRow, outcome: Failure, afterFailedRestore: ServiceChange | undefined, at: string,
): Promise<void> {
  const cause = { kind: operation.kind as OperationKind, operationId: operation.id };
  if (operation.kind === 'create_server' && operation.server_id) {
    await changeServerState(trx, operation.server_id, { state: 'failed' }, operation.id, at, 'server.failed');
    return;
  }
  if (!operation.service_id) return;
  if (operation.kind === 'backup') {
    // A failed backup changes nothing of the service, which kept running throughout.
    await endBackupState(trx, backupIdOf(operation.parameters), { state: 'failed', reason: outcome.reason, at });
    return;
  }
  if (operation.kind === 'restore') {
    await updateService(trx, operation.service_id, afterFailedRestore ?? { state: 'failed', reason: outcome.reason }, at);
    await writeRestoreEvent(trx, operation, restoreParametersOf(operation.parameters).backup_id, outcome.reason, at);
    return;
  }
  if (operation.kind === 'move' && moveParametersOf(operation.parameters).previous_state === 'stopped') {
    // A stopped service whose move failed stays as it was, on its old server.
    await updateService(trx, operation.service_id, { state: 'stopped', reason: outcome.reason, pid: null }, at);
    return;
  }
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

/**
 * A restore that failed kept the service's data (driver.restore's promise); the service is
 * running again if it ran, and shows what it was before otherwise. Asked of what really runs.
 */
async function serviceAfterFailedRestore(deps: PerformDeps, operation: OperationRow, reason: string): Promise<ServiceChange> {
  const running = await runningNow(deps, operation);
  if (running) return running;
  const { previous_state: previous } = restoreParametersOf(operation.parameters);
  // It ran before and does not now: failed, with why.
  if (previous === 'running') return { state: 'failed', reason, pid: null };
  return { state: previous, pid: null };
}

/** The service's row as what runs now, asked of the driver; undefined when nothing of it runs. */
async function runningNow(deps: PerformDeps, operation: OperationRow): Promise<ServiceChange | undefined> {
  const spec = operation.service_id ? await loadServiceSpec(deps.db.kysely, operation.service_id) : undefined;
  const status = spec ? await deps.driver.status(spec).catch(() => undefined) : undefined;
  if (status?.state !== 'running') return undefined;
  return { state: 'running', pid: status.pid, port: status.port, revision: status.revision, ...(status.publishedHost ? { publishedHost: status.publishedHost } : {}), proxy: status.proxy ?? null };
}

async function attemptAction(deps: PerformDeps, operation: OperationRow, steps: StepLog): Promise<Outcome> {
  const action = ACTIONS[operation.kind as OperationKind];
  try {
    if (!action) throw new Error(`no action for operation kind ${operation.kind}`);
    return { ok: true, value: await action({ db: deps.db.kysely, driver: steps.recording(deps.driver), operation, dataDir: deps.db.dataDir, newServersDockerHost: deps.newServersDockerHost ?? null, secrets: deps.secrets }) };
  } catch (error) {
    if (error instanceof DriverError) return { ok: false, reason: error.reason, portUnusable: error.portUnusable };
    deps.onError(error, `operation ${operation.id} (${operation.kind})`);
    return { ok: false, reason: INTERNAL_REASON, portUnusable: false };
  }
}

/** Stops whatever the operation may have left half-running, then fails it. */
async function giveUp(deps: PerformDeps, operation: OperationRow, attempt: number, steps: StepLog): Promise<Outcome> {
  steps.note(`Given up after ${attempt - 1} interruptions`);
  if (operation.kind === 'move') {
    await abandonMove(deps.db.kysely, steps.recording(deps.driver), operation).catch((error: unknown) => deps.onError(error, `giving up ${operation.id}`));
  } else if (operation.service_id && MAY_LEAVE_A_PROCESS.has(operation.kind)) {
    const spec = await loadServiceSpec(deps.db.kysely, operation.service_id);
    if (spec) await steps.recording(deps.driver).stop(spec).catch((error: unknown) => deps.onError(error, `giving up ${operation.id}`));
  }
  // A recovery's service runs nowhere yet: what its attempts made on its new server goes (its row stays on its lost server).
  if (operation.kind === 'recover') await removeWhatRecoveryMade(deps.db.kysely, operation).catch((error: unknown) => deps.onError(error, `giving up ${operation.id}`));
  return {
    ok: false, portUnusable: false,
    reason: `The operation was interrupted ${attempt - 1} times (the control plane stopped while running it), so it was given up. ` +
      'Run it again.',
  };
}
