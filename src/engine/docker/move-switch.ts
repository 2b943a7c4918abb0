// The switch of a move (src/engine/actions/move.ts), the one moment a service changes server:
// it is started on its new server with the driver's own start, which resolves only once it
// answers its health check there; only then does its row say the new server, its port and host
// (its url follows: service-url.ts), in one write with the move's own record (`recordSwitch`).
// A service that was stopped switches without starting. On a server with a base domain the new
// server's proxy serves it from its start there (its platform name moved under that server's
// base domain, slug kept: platform-name.ts), and the old server's proxy stopped serving it when
// it was stopped there; on one without, its front's port is the new url.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { RunningService, ServiceDriver, ServiceSpec, StartHooks } from '../driver.js';
import { inWriteTransaction } from '../write-transaction.js';

/** The row is written at the switch only: until then it says the old server, where a failed move leaves the service. */
const UNRECORDED: StartHooks = { portAssigned: async () => undefined, spawned: async () => undefined };

export async function switchToServer(
  db: Kysely<Database>, driver: ServiceDriver, target: ServiceSpec, options: { start: boolean; recordSwitch: (trx: Kysely<Database>) => Promise<void> },
): Promise<RunningService | null> {
  const running = options.start ? await driver.start(target, UNRECORDED) : null;
  await inWriteTransaction(db, async (trx) => {
    await trx.updateTable('erp_services').set({
      server_id: target.server.id, port: running?.port ?? null, pid: running?.pid ?? null, published_host: running?.publishedHost ?? null,
      proxy_upstream: running?.proxy?.upstream ?? null, proxy_health_path: running?.proxy?.healthPath ?? null,
    }).where('id', '=', target.id).execute();
    await options.recordSwitch(trx);
  });
  return running;
}
