// Docker servers in the database: a server row plus its engine (schema.sql, docker_servers).
// A Docker server is not hosted by a node (servers.node stays null): any node reaches its
// engine through the API, so any node runs its operations and reconciles its services.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';

/** Makes a server (new, with no services yet) a Docker server on `dockerHost`; idempotent. */
export async function makeDockerServer(db: Kysely<Database>, serverId: string, dockerHost: string, image: string | null = null): Promise<void> {
  await db.insertInto('docker_servers').values({ server_id: serverId, docker_host: dockerHost, image, created_at: nowIso() })
    .onConflict((conflict) => conflict.column('server_id').doNothing()).execute();
  await db.updateTable('servers').set({ node: null }).where('id', '=', serverId).execute();
}
