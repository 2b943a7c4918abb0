// The service an operation acts on, and start hooks that record its port and pid as soon as
// they exist, so that a crash right after leaves a trace to recover from.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { OperationRow } from '../../db/repositories/operations.js';
import { DriverError, type ServiceSpec, type StartHooks } from '../driver.js';
import { loadServiceSpec } from '../service-spec.js';

/** A readable failure if the service was deleted meanwhile. */
export async function requireService(db: Kysely<Database>, operation: OperationRow): Promise<ServiceSpec> {
  const spec = operation.service_id ? await loadServiceSpec(db, operation.service_id) : undefined;
  if (!spec) throw new DriverError('The ERP service no longer exists.');
  return spec;
}

export function persistingHooks(db: Kysely<Database>, serviceId: string): StartHooks {
  return {
    async portAssigned(port) {
      await db.updateTable('erp_services').set({ port }).where('id', '=', serviceId).execute();
    },
    async spawned(pid) {
      await db.updateTable('erp_services').set({ pid }).where('id', '=', serviceId).execute();
    },
  };
}
