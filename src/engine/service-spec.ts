// Reads what a driver needs about a service (and its server) from the database.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { ServiceSpec } from './driver.js';

export async function loadServiceSpec(db: Kysely<Database>, serviceId: string): Promise<ServiceSpec | undefined> {
  const row = await db.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name', 's.revision', 's.port', 's.pid', 's.outgoing_smtp', 's.parent_id', 'v.id as server_id', 'v.root_dir'])
    .where('s.id', '=', serviceId).where('s.deleted_at', 'is', null).executeTakeFirst();
  return row && specOf(row);
}

export function specOf(row: {
  id: string; name: string; revision: number; port: number | null; pid: number | null; outgoing_smtp: string | null;
  parent_id: string | null; server_id: string; root_dir: string | null;
}): ServiceSpec {
  return {
    id: row.id, name: row.name, revision: row.revision, port: row.port, pid: row.pid, outgoingSmtp: row.outgoing_smtp,
    parentId: row.parent_id, server: { id: row.server_id, rootDir: row.root_dir },
  };
}

/** Ports held by services (running or not), so that a new service never gets one of them. */
export async function takenPorts(db: Kysely<Database>): Promise<ReadonlySet<number>> {
  const rows = await db.selectFrom('erp_services').select('port').where('port', 'is not', null).where('deleted_at', 'is', null).execute();
  return new Set(rows.map((row) => row.port as number));
}
