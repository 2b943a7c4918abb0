// What each kind of operation does, through the driver. Each action converges: run again after
// a crash (the worker resumes operations whose worker died), it finishes the job without
// doing it twice: start adopts a process already running, stop and delete are idempotent,
// a redeploy's target revision, a copy's source and a backup's id were fixed when it was
// queued, and a restore keeps the first safety backup it took.
import type { OperationKind, OperationRow } from '../db/repositories/operations.js';
import type { ActionContext, ActionResult } from './actions/action-types.js';
import { backupAction } from './actions/backup.js';
import { copyAction } from './actions/copy.js';
import { restoreAction } from './actions/restore.js';
import { recoverAction } from './actions/recover.js';
import { moveAction } from './actions/move.js';
import { persistingHooks, requireService } from './actions/service-of-operation.js';
import { loadServerSpec, loadServiceSpec } from './service-spec.js';
import { makeDockerServer } from './docker/docker-servers.js';

type Action = (context: ActionContext) => Promise<ActionResult>;

export const ACTIONS: Record<OperationKind, Action> = {
  async start({ db, driver, operation }) {
    const spec = await requireService(db, operation);
    const running = await driver.start(spec, persistingHooks(db, spec.id));
    return { result: { port: running.port, revision: running.revision }, service: { state: 'running', reason: null, ...running } };
  },
  async stop({ db, driver, operation }) {
    const spec = await requireService(db, operation);
    await driver.stop(spec);
    return { result: {}, service: { state: 'stopped', reason: null, pid: null } };
  },
  async redeploy({ db, driver, operation }) {
    const spec = await requireService(db, operation);
    const { revision } = JSON.parse(operation.parameters) as { revision: number };
    const running = await driver.redeploy(spec, revision, persistingHooks(db, spec.id));
    return { result: { port: running.port, revision }, service: { state: 'running', reason: null, ...running, revision } };
  },
  async create({ db, driver, operation }) {
    const provisioned = await driver.provision(await requireService(db, operation));
    // Sealed in the result; only the token that created the service sees it opened (tools/views.ts).
    const credentials = provisioned?.initialCredentials;
    return { result: credentials ? { initial_credentials: credentials } : {}, service: { state: 'stopped', reason: null } };
  },
  async delete({ db, driver, operation }) {
    const copies = copiesToDelete(operation);
    for (const copyId of copies) {
      const copy = await loadServiceSpec(db, copyId);
      if (copy) await driver.destroy(copy);
    }
    await driver.destroy(await requireService(db, operation));
    return {
      result: { deleted_copies: copies }, alsoDeleted: copies,
      service: { state: 'stopped', reason: null, pid: null, port: null, deleted: true },
    };
  },
  async create_server({ db, driver, operation, newServersDockerHost }) {
    if (newServersDockerHost) await makeDockerServer(db, operation.server_id as string, newServersDockerHost);
    const { rootDir } = await driver.provisionServer(await loadServerSpec(db, operation.server_id as string));
    return { result: {}, server: { state: 'ready', rootDir } };
  },
  copy: copyAction,
  backup: backupAction,
  restore: restoreAction,
  recover: recoverAction,
  move: moveAction,
};

/** The copies a delete operation was queued with. */
export function copiesToDelete(operation: OperationRow): string[] {
  return (JSON.parse(operation.parameters) as { copies?: string[] }).copies ?? [];
}
