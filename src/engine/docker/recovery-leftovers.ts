// What a recovery that ended failed (recover.ts; given up after interruptions: perform.ts) made
// of its service on the server it was recovering it onto: the network, the volumes (empty, staged
// or restored), the containers (a staged database, a half-started Tryton). Its row stays on its
// lost server, to be asked again, maybe onto another server: nothing of it may stay running or
// holding disk on this one. Only what carries both the service's and that server's labels goes
// (never the lost server's, which may share the engine); the service's secrets stay (its own,
// as the next recovery needs them), unlike driver.destroy.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { loadServerSpec } from '../service-spec.js';
import { removeContainer, removeVolume } from './containers.js';
import { EngineRegistry } from './engine-registry.js';
import { LABEL, labelFilter } from './labels.js';

export async function removeRecoveryLeftovers(db: Kysely<Database>, serviceId: string, serverId: string): Promise<void> {
  const server = await loadServerSpec(db, serverId);
  if (!server.docker) return;
  const engines = new EngineRegistry();
  try {
    const { api } = engines.engineOf(server);
    const filters = labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.serverId]: serverId });
    const containers = await api.json<{ Id: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    for (const container of containers) await removeContainer(api, container.Id);
    const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    for (const volume of volumes) await removeVolume(api, volume.Name);
    const networks = await api.json<{ Id: string }[]>('GET', '/networks', { query: { filters } });
    for (const network of networks) await api.json('DELETE', `/networks/${network.Id}`, { accept: [404] });
  } finally {
    await engines.close();
  }
}
