// What each kind of operation does, through the driver. Each action converges: run again after
// a crash (the worker resumes operations whose worker died), it finishes the job without
// doing it twice: start adopts a process already running, stop and delete are idempotent,
// and a redeploy's target revision was fixed when it was queued.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { OperationKind, OperationRow } from '../db/repositories/operations.js';
import { DriverError, type ServiceDriver, type ServiceSpec, type StartHooks } from './driver.js';
import { loadServiceSpec } from './service-spec.js';
import type { ServiceChange } from './state-changes.js';

export interface ActionContext {
  db: Kysely<Database>;
  driver: ServiceDriver;
  operation: OperationRow;
}

export interface ActionResult {
  result: object;
  service?: ServiceChange;
  server?: { state: 'ready'; rootDir: string };
  /** Other services (a deleted service's copies) deleted along with it. */
  alsoDeleted?: string[];
}

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
    await driver.provision(await requireService(db, operation));
    return { result: {}, service: { state: 'stopped', reason: null } };
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
  async create_server({ db, driver, operation }) {
    const server = await db.selectFrom('servers').select(['id', 'root_dir'])
      .where('id', '=', operation.server_id as string).executeTakeFirstOrThrow();
    const { rootDir } = await driver.provisionServer({ id: server.id, rootDir: server.root_dir });
    return { result: {}, server: { state: 'ready', rootDir } };
  },
};

/** The copies a delete operation was queued with. */
export function copiesToDelete(operation: OperationRow): string[] {
  return (JSON.parse(operation.parameters) as { copies?: string[] }).copies ?? [];
}

async function requireService(db: Kysely<Database>, operation: OperationRow): Promise<ServiceSpec> {
  const spec = operation.service_id ? await loadServiceSpec(db, operation.service_id) : undefined;
  if (!spec) throw new DriverError('The ERP service no longer exists.');
  return spec;
}

/** Records the port and the pid as soon as they exist, so that a crash right after leaves a trace. */
function persistingHooks(db: Kysely<Database>, serviceId: string): StartHooks {
  return {
    async portAssigned(port) {
      await db.updateTable('erp_services').set({ port }).where('id', '=', serviceId).execute();
    },
    async spawned(pid) {
      await db.updateTable('erp_services').set({ pid }).where('id', '=', serviceId).execute();
    },
  };
}
