// What the authorization core and the capabilities need, and nothing more: the database, the
// audit trail and the approval hook (src/decisions/approvals.ts, over the catalog). `teaminfra
// mcp` (stdio) runs on this alone, so an assistant starting it does not wait for the HTTP server,
// the mail catcher or the webhook worker to load. Reading a service's logs or metrics loads the
// engine's client on the first such call, not before.
import { catalog } from '../tools/index.js';
import { AuditLog } from './core/audit.js';
import type { CoreDeps } from './core/invoke.js';
import type { ServiceObserver } from './core/service-observer.js';
import { openDatabase, type DatabaseOptions, type Db } from './db/connect.js';
import { approvalsOf } from './decisions/approvals.js';

export interface OpenCore extends CoreDeps {
  db: Db;
  close(): Promise<void>;
}

export function openCore(dataDir: string, database: DatabaseOptions | undefined, onInternalError?: CoreDeps['onInternalError']): OpenCore {
  const db = openDatabase(dataDir, database);
  const audit = new AuditLog(db.kysely, { onError: (error) => console.error('audit flush failed', error) });
  const observer = lazyObserver(db);
  return {
    db,
    audit,
    onInternalError,
    approvals: approvalsOf(catalog),
    observer,
    async close() {
      await observer.close();
      await audit.close();
      await db.close();
    },
  };
}

function lazyObserver(db: Db): ServiceObserver & { close(): Promise<void> } {
  let loaded: Promise<{ observer: ServiceObserver; close(): Promise<void> }> | undefined;
  const load = () => {
    loaded ??= Promise.all([import('./engine/observe/engine-observer.js'), import('./engine/docker/engine-registry.js')])
      .then(([{ EngineObserver }, { EngineRegistry }]) => {
        const engines = new EngineRegistry();
        return { observer: new EngineObserver(db.kysely, engines, db.dataDir), close: () => engines.close() };
      });
    return loaded;
  };
  return {
    logs: async (serviceId, query) => (await load()).observer.logs(serviceId, query),
    metrics: async (serviceId) => (await load()).observer.metrics(serviceId),
    close: async () => {
      if (loaded) await (await loaded).close();
    },
  };
}
