// Makes the database agree with what really runs, for services no operation is working on
// (those converge through their operation). At start, after a crash or a detached stop:
// - "running" and answering: adopted (pid and port refreshed); not running: failed, with why;
// - "stopped" or "failed" but a process of it runs (left by a crash): that process is stopped;
// - a transitional state with no operation behind it: set to what really runs.
// Periodically, the first and last checks, so that a service whose process died is shown
// failed, and one whose operation ended without it (its node was taken for dead, lost-node.ts)
// shows what runs.
// Only services on servers this node hosts (or that no node hosts yet): another node's
// processes run on its machine, where this one cannot see them. At start, a server left
// provisioning by an operation that ended without it is provisioned again (idempotent).
import type { Kysely } from 'kysely';
import type { Database, ServiceState } from '../db/tables.js';
import { nowIso } from '../db/ids.js';
import type { ServiceDriver, ServiceStatus } from './driver.js';
import { loadServerSpec, serviceSpecQuery, specOf } from './service-spec.js';
import { changeServerState, changeServiceState, type ServiceChange } from './state-changes.js';
import { inWriteTransaction } from './write-transaction.js';

export interface ReconcileDeps {
  db: Kysely<Database>;
  driver: ServiceDriver;
  /** This node's name (servers.node). */
  node: string;
  onError(error: unknown, context: string): void;
}

const GONE = 'Its process is no longer running (it ended, or the machine restarted while it ran). Start it again.';
const INTERRUPTED = 'An operation on it was interrupted; this is the state it was found in.';

export async function reconcileServices(deps: ReconcileDeps, mode: 'startup' | 'periodic'): Promise<void> {
  let query = serviceSpecQuery(deps.db).select(['s.state', 's.updated_at'])
    .where('s.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('v.node', 'is', null), eb('v.node', '=', deps.node)]))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('operations as o').select('o.id')
      .whereRef('o.service_id', '=', 's.id').where('o.state', 'in', ['queued', 'running']))));
  if (mode === 'periodic') query = query.where('s.state', 'not in', ['stopped', 'failed']);
  if (mode === 'startup') await reconcileServers(deps);
  for (const row of await query.execute()) {
    try {
      const spec = specOf(row);
      const status = await deps.driver.status(spec);
      if (mode === 'startup' && (row.state === 'stopped' || row.state === 'failed') && status.state !== 'stopped') {
        await deps.driver.stop(spec);
        continue;
      }
      const change = changeFor(row.state, status, row.pid, row.port);
      if (change) await applyIfUnchanged(deps.db, row, change);
    } catch (error) {
      deps.onError(error, `reconciling service ${row.id}`);
    }
  }
}

function changeFor(state: ServiceState, status: ServiceStatus, pid: number | null, port: number | null): ServiceChange | undefined {
  const settled = state === 'running' || state === 'stopped' || state === 'failed';
  if (status.state === 'starting') return undefined;
  if (status.state === 'running') {
    if (state === 'running' && status.pid === pid && status.port === port) return undefined;
    return { state: 'running', pid: status.pid, port: status.port, reason: null };
  }
  if (state === 'running') return { state: 'failed', reason: GONE, pid: null };
  if (!settled) return { state: 'failed', reason: INTERRUPTED, pid: null };
  return undefined;
}

/** Only if nothing touched the service since it was read (an operation may have started since). */
async function applyIfUnchanged(
  db: Kysely<Database>, row: { id: string; state: ServiceState; updated_at: string }, change: ServiceChange,
): Promise<void> {
  await inWriteTransaction(db, async (trx) => {
    const current = await trx.selectFrom('erp_services').select(['state', 'updated_at']).where('id', '=', row.id).executeTakeFirst();
    if (!current || current.state !== row.state || current.updated_at !== row.updated_at) return;
    const busy = await trx.selectFrom('operations').select('id').where('service_id', '=', row.id)
      .where('state', 'in', ['queued', 'running']).executeTakeFirst();
    if (busy) return;
    // Adopting a process (same state, new pid) is bookkeeping, not a state change: no event.
    if (change.state === row.state) {
      await trx.updateTable('erp_services').set({ pid: change.pid ?? null, port: change.port ?? null }).where('id', '=', row.id).execute();
      return;
    }
    await changeServiceState(trx, row.id, change, { kind: 'reconcile', operationId: null }, nowIso());
  });
}

/** Servers of this node still provisioning with no operation behind it: provisioned again (idempotent). */
async function reconcileServers(deps: ReconcileDeps): Promise<void> {
  const servers = await deps.db.selectFrom('servers as v').select(['v.id', 'v.root_dir'])
    .where('v.node', '=', deps.node).where('v.state', '=', 'provisioning').where('v.deleted_at', 'is', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('operations as o').select('o.id')
      .whereRef('o.server_id', '=', 'v.id').where('o.service_id', 'is', null).where('o.state', 'in', ['queued', 'running']))))
    .execute();
  for (const server of servers) {
    try {
      const { rootDir } = await deps.driver.provisionServer(await loadServerSpec(deps.db, server.id));
      await inWriteTransaction(deps.db, async (trx) => {
        const busy = await trx.selectFrom('operations').select('id').where('server_id', '=', server.id).where('service_id', 'is', null)
          .where('state', 'in', ['queued', 'running']).executeTakeFirst();
        const current = await trx.selectFrom('servers').select('state').where('id', '=', server.id).executeTakeFirst();
        if (busy || current?.state !== 'provisioning') return;
        await changeServerState(trx, server.id, { state: 'ready', rootDir }, null, nowIso(), 'server.ready');
      });
    } catch (error) {
      deps.onError(error, `reconciling server ${server.id}`);
    }
  }
}
