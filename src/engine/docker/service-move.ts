// What moves a Docker service to another server's engine (src/engine/actions/move.ts): its data,
// read as a copy reads it (a consistent snapshot, taken while it keeps serving when its
// definition can: service-data.ts), loaded into the same generation of its volumes on the other
// engine, under the same service id, so its secrets (the admin's password, its database's),
// mail settings and image digests are the ones it had. Nothing is neutralized: it is the same
// service, not a copy. And the removal of what a move left on the server it left: containers,
// data volumes, network, front, never the backups volume (its old backups stay restorable).
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ServiceSpec } from '../driver.js';
import { readAppManifest } from './app-archive.js';
import { ensureNetwork, listAppContainers, removeNetworks } from './app-containers.js';
import { appDataParts, refuseWithoutSnapshot } from './app-data.js';
import { verifyArchive } from './archives.js';
import { listServiceContainers, listVolumes, removeAbandonedHelpers, removeContainer, removeVolume } from './containers.js';
import type { DockerApi } from './docker-api.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { appNetworkName, LABEL, labelsOf } from './labels.js';
import { currentGeneration, definitionOf, ensureVolumes } from './service-definition.js';
import { loadInto, schemaOfArchive, writeServiceArchive } from './service-data.js';
import { removeFront } from './service-front.js';
import { ensureServiceImages } from './service-images.js';

export class DockerMoves {
  constructor(private readonly options: DockerDriverOptions) {}

  async transferData(source: ServiceSpec, target: ServiceSpec): Promise<{ sizeBytes: number }> {
    const app = await definitionOf(this.options, source);
    refuseWithoutSnapshot(app, 'Moves');
    const { api: sourceApi } = this.options.engines.engineOf(source.server);
    const { api } = this.options.engines.engineOf(target.server);
    // The target runs exactly the images the service runs (by digest where it has them), or a sentence says what is missing.
    await ensureServiceImages(this.options, source, app);
    await ensureServiceImages(this.options, target, app);
    await removeAbandonedHelpers(sourceApi, source.id);
    // What an earlier attempt, or an earlier stay on that server, left there goes first.
    await removeEverythingOn(api, target.id);
    const generation = await currentGeneration(this.options, source);
    const file = join(this.options.dataDir, 'moves', `${source.id}.tar.zst`);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      const packed = await writeServiceArchive(this.options, source, app, file);
      const compression = await verifyArchive(file, packed.sha256);
      await ensureNetwork(api, appNetworkName(target.id), labelsOf({ serviceId: target.id, serverId: target.server.id, role: 'network' }));
      const manifest = await readAppManifest(file, compression, app.imageContract ? appDataParts(app).manifest : undefined);
      await ensureVolumes(api, target, app, generation, await schemaOfArchive(api, app, manifest));
      await loadInto(this.options, api, target, app, generation, { file, compression, filesAtTop: manifest.filesAtTop ?? false }, { neutralize: false });
      return { sizeBytes: packed.sizeBytes };
    } finally {
      rmSync(file, { force: true });
    }
  }

  async removeFromServer(service: ServiceSpec): Promise<void> {
    await removeEverythingOn(this.options.engines.engineOf(service.server).api, service.id);
  }
}

/** The service's front, containers (one-off ones too), data volumes and networks on one engine; its backups stay. */
async function removeEverythingOn(api: DockerApi, serviceId: string): Promise<void> {
  await removeFront(api, serviceId);
  for (const container of await listAppContainers(api, serviceId)) await removeContainer(api, container.id);
  for (const helper of await listServiceContainers(api, serviceId, 'helper')) await removeContainer(api, helper.id);
  for (const volume of await listVolumes(api, { [LABEL.serviceId]: serviceId, [LABEL.role]: 'data' })) await removeVolume(api, volume);
  await removeNetworks(api, serviceId);
}
