// What the authorization core and the capabilities need, and nothing more: the database, the
// audit trail and the approval hook (src/decisions/approvals.ts, over the catalog). `teaminfra
// mcp` (stdio) runs on this alone, so an assistant starting it does not wait for the HTTP server,
// the mail catcher or the webhook worker to load.
import { catalog } from '../tools/index.js';
import { AuditLog } from './core/audit.js';
import type { CoreDeps } from './core/invoke.js';
import { openDatabase, type DatabaseOptions, type Db } from './db/connect.js';
import { approvalsOf } from './decisions/approvals.js';

export interface OpenCore extends CoreDeps {
  db: Db;
  close(): Promise<void>;
}

export function openCore(dataDir: string, database: DatabaseOptions | undefined, onInternalError?: CoreDeps['onInternalError']): OpenCore {
  const db = openDatabase(dataDir, database);
  const audit = new AuditLog(db.kysely, { onError: (error) => console.error('audit flush failed', error) });
  return {
    db,
    audit,
    onInternalError,
    approvals: approvalsOf(catalog),
    async close() {
      await audit.close();
      await db.close();
    },
  };
}
