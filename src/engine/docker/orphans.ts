// Containers, volumes and networks on our engines whose service no longer exists (deleted while an engine
// was unreachable, or a crash between a delete's steps). They may hold a team's data, so they
// are reported, one log line each, and never removed by us: the operator decides.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { EngineRegistry } from './engine-registry.js';
import { LABEL, labelFilter } from './labels.js';

export interface Orphan {
  kind: 'container' | 'volume' | 'network';
  name: string;
  serviceId: string;
  serverId: string;
  engine: string;
}

export async function findDockerOrphans(db: Kysely<Database>, engines: EngineRegistry): Promise<Orphan[]> {
  const servers = await db.selectFrom('docker_servers as d').innerJoin('servers as v', 'v.id', 'd.server_id')
    .select(['d.server_id', 'd.docker_host', 'd.image', 'v.root_dir']).where('v.deleted_at', 'is', null).execute();
  const live = new Set((await db.selectFrom('erp_services').select('id').where('deleted_at', 'is', null).execute()).map((row) => row.id));
  const orphans: Orphan[] = [];
  for (const server of servers) {
    const { api, address } = engines.engineOf({ id: server.server_id, rootDir: server.root_dir, docker: { host: server.docker_host, image: server.image } });
    const filters = labelFilter({ [LABEL.serverId]: server.server_id });
    const containers = await api.json<{ Names: string[]; Labels: Record<string, string> }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    for (const container of containers) {
      const serviceId = container.Labels[LABEL.serviceId];
      if (serviceId && !live.has(serviceId)) {
        orphans.push({ kind: 'container', name: (container.Names[0] ?? '').replace(/^\//, ''), serviceId, serverId: server.server_id, engine: address.text });
      }
    }
    const volumes = (await api.json<{ Volumes: { Name: string; Labels: Record<string, string> | null }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    for (const volume of volumes) {
      const serviceId = volume.Labels?.[LABEL.serviceId];
      if (serviceId && !live.has(serviceId)) orphans.push({ kind: 'volume', name: volume.Name, serviceId, serverId: server.server_id, engine: address.text });
    }
    // An app's service has a network of its own (service-definition.ts).
    const networks = await api.json<{ Name: string; Labels: Record<string, string> | null }[]>('GET', '/networks', { query: { filters } });
    for (const network of networks) {
      const serviceId = network.Labels?.[LABEL.serviceId];
      if (serviceId && !live.has(serviceId)) orphans.push({ kind: 'network', name: network.Name, serviceId, serverId: server.server_id, engine: address.text });
    }
  }
  return orphans;
}

export async function reportDockerOrphans(db: Kysely<Database>, engines: EngineRegistry, onError: (error: unknown, context: string) => void): Promise<void> {
  try {
    for (const orphan of await findDockerOrphans(db, engines)) {
      console.warn(JSON.stringify({
        level: 'warn', msg: `Docker ${orphan.kind} ${orphan.name} belongs to ERP service ${orphan.serviceId}, which no longer exists; ` +
          'it was left in place (it may hold data). Remove it with docker rm / docker volume rm / docker network rm once you no longer need it.',
        ...orphan,
      }));
    }
  } catch (error) {
    onError(error, 'looking for Docker containers and volumes of deleted services');
  }
}
