// Reads what a driver needs about a service (and its server) from the database.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { ServerSpec, ServiceSpec } from './driver.js';

/** Services with their server and, for a Docker server, its engine: the columns specOf reads. */
export function serviceSpecQuery(db: Kysely<Database>) {
  return db.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
    .leftJoin('docker_servers as d', 'd.server_id', 'v.id')
    .select(['s.id', 's.name', 's.revision', 's.port', 's.pid', 's.outgoing_smtp', 's.outgoing_smtp_allow_private', 's.parent_id', 's.app', 'v.id as server_id', 'v.root_dir',
      'd.docker_host', 'd.image', 'd.memory_mb', 'd.cpu_millicores']);
}

export async function loadServiceSpec(db: Kysely<Database>, serviceId: string): Promise<ServiceSpec | undefined> {
  const row = await serviceSpecQuery(db).where('s.id', '=', serviceId).where('s.deleted_at', 'is', null).executeTakeFirst();
  return row && specOf(row);
}

export async function loadServerSpec(db: Kysely<Database>, serverId: string): Promise<ServerSpec> {
  const row = await db.selectFrom('servers as v').leftJoin('docker_servers as d', 'd.server_id', 'v.id')
    .select(['v.id as server_id', 'v.root_dir', 'd.docker_host', 'd.image', 'd.memory_mb', 'd.cpu_millicores']).where('v.id', '=', serverId).executeTakeFirstOrThrow();
  return serverSpecOf(row);
}

type ServerColumns = {
  server_id: string; root_dir: string | null; docker_host: string | null; image: string | null; memory_mb?: number | null; cpu_millicores?: number | null;
};

function serverSpecOf(row: ServerColumns): ServerSpec {
  const limits = { memoryMb: row.memory_mb ?? null, cpuMillicores: row.cpu_millicores ?? null };
  return { id: row.server_id, rootDir: row.root_dir, docker: row.docker_host ? { host: row.docker_host, image: row.image, limits } : null };
}

export function specOf(row: {
  id: string; name: string; revision: number; port: number | null; pid: number | null; outgoing_smtp: string | null;
  outgoing_smtp_allow_private?: number; parent_id: string | null; app?: string | null; server_id: string; root_dir: string | null; docker_host?: string | null; image?: string | null;
  memory_mb?: number | null; cpu_millicores?: number | null;
}): ServiceSpec {
  return {
    id: row.id, name: row.name, revision: row.revision, port: row.port, pid: row.pid, outgoingSmtp: row.outgoing_smtp,
    outgoingSmtpAllowPrivate: row.outgoing_smtp_allow_private === 1,
    parentId: row.parent_id, app: row.app ?? null, server: serverSpecOf({ ...row, docker_host: row.docker_host ?? null, image: row.image ?? null }),
  };
}

/** Ports held by services (running or not), so that a new service never gets one of them. */
export async function takenPorts(db: Kysely<Database>): Promise<ReadonlySet<number>> {
  const rows = await db.selectFrom('erp_services').select('port').where('port', 'is not', null).where('deleted_at', 'is', null).execute();
  return new Set(rows.map((row) => row.port as number));
}
