// The Docker driver: a server is a Docker engine, an ERP service the containers of its app
// definition (service-definition.ts: a registered app such as tryton, or the one-service
// definition its server's image contract gives, as for the bundled demo), on a labelled network
// of its own, with its data in named volumes that outlive the containers, reached through its
// server's proxy at its https names once it has one (proxy/route-server.ts), else through its
// front on the service's port. Every step can be run again after a crash (names are derived from the service,
// the revision and the generation of its data, and a create that finds its object adopts it),
// and what runs is always read from the engine by our labels, never assumed. Each action is
// written once, here and in the files it calls: service-start.ts (start, redeploy),
// service-data.ts (the data out and in), service-restore.ts (restore).
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { relayLoginOf } from '../../mail/outgoing-relay.js';
import { initialCredentialsOf, sealInitialCredentials, type SealedInitialCredentials } from '../apps/initial-credentials.js';
import {
  DriverError, type BackupFile, type RestoreHooks, type RunningService, type ServerSpec, type ServiceDriver, type ServiceSpec,
  type ServiceStatus, type StartHooks,
} from '../driver.js';
import { readAppManifest } from './app-archive.js';
import { ensureNetwork, listAppContainers, removeNetworks } from './app-containers.js';
import { appDataParts, refuseWithoutSnapshot } from './app-data.js';
import { verifyArchive } from './archives.js';
import { ensureBackupsVolume, storeBackupOnEngine, withBackupSpoolFile } from './backup-store.js';
import {
  answersHealth, containerPid, createHelper, listServiceContainers, listVolumes, removeAbandonedHelpers, removeContainer, removeVolume, stopContainer,
} from './containers.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { readDockerState, writeDockerState } from './docker-state.js';
import { publishedHost } from './engine-address.js';
import { appNetworkName, dataVolumeName, LABEL, labelsOf } from './labels.js';
import { definitionOf, currentGeneration, ensureNetworkAndVolumes, ensureVolumes } from './service-definition.js';
import { initialiseImageData, loadInto, schemaOfArchive, writeServiceArchive } from './service-data.js';
import { holdRequests } from './proxy/hold-requests.js';
import { proxiedStatus } from './proxy/proxied-status.js';
import { routeServer, servedByProxy } from './proxy/route-server.js';
import { findFront, frontStatus, removeFront, stopFront } from './service-front.js';
import { ensureServiceImages } from './service-images.js';
import { restartCountOf } from './restart-count.js';
import { restoreService } from './service-restore.js';
import { deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets } from './service-secrets.js';
import { redeployService, startService } from './service-start.js';

export type { DockerDriverOptions } from './docker-driver-options.js';

export class DockerDriver implements ServiceDriver {
  readonly name = 'docker';

  constructor(private readonly options: DockerDriverOptions) {}

  restartCount = (service: ServiceSpec): Promise<number> => restartCountOf(this.options.engines.engineOf(service.server).api, service.id);

  async provisionServer(server: ServerSpec): Promise<{ rootDir: string }> {
    // The engine answers and has the image (the bundled one is built there if missing), or a sentence says which is wrong.
    await this.options.engines.contractOf(server);
    const { api, address } = this.options.engines.engineOf(server);
    await ensureBackupsVolume(api, server.id);
    return { rootDir: address.text };
  }

  /** The network, the volumes and the sealed secrets; the admin's first login, sealed, when the definition has one. */
  async provision(service: ServiceSpec): Promise<{ initialCredentials?: SealedInitialCredentials }> {
    const app = await definitionOf(this.options, service);
    const { api } = this.options.engines.engineOf(service.server);
    // Now, not at the first start: an image the engine lacks is pulled (its digest recorded), or a sentence says why not.
    await ensureServiceImages(this.options, service, app);
    await ensureNetworkAndVolumes(api, service, app, await currentGeneration(this.options, service));
    await writeDockerState(this.options.db, this.options.secrets, service.id, {});
    await initialiseImageData(this.options, service, app);
    const values = await ensureServiceSecrets(this.options.db, this.options.secrets, service.id, app.secrets);
    const credentials = initialCredentialsOf(app, { ...values, TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name });
    return credentials ? { initialCredentials: sealInitialCredentials(this.options.secrets, service.id, credentials) } : {};
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    const app = await definitionOf(this.options, service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const containers = await listAppContainers(api, service.id);
    const web = containers.filter((each) => each.appService === app.web.service);
    // A front until its next start moves it to its server's proxy (the server got a base domain since).
    if (await findFront(api, service.id)) return frontStatus(api, service.id, host, app.web.healthPath, web);
    if (await servedByProxy(this.options.db, service.id, service.server.id)) return proxiedStatus(this.options, api, service, app, web);
    // A service started before fronts existed: its web container is published on the service's port itself.
    const running = containers.filter((container) => container.running);
    const published = running.filter((container) => container.appService === app.web.service).sort((a, b) => b.revision - a.revision);
    for (const container of published) {
      if (container.port !== null && await answersHealth(host, container.port, app.web.healthPath, service.id)) {
        const { pid } = await containerPid(api, container.id);
        return { state: 'running', pid, port: container.port, revision: container.revision, publishedHost: host };
      }
    }
    if (running[0]) return { state: 'starting', pid: (await containerPid(api, running[0].id)).pid };
    return { state: 'stopped' };
  }

  start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    return startService(this.options, service, hooks);
  }

  redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    return redeployService(this.options, service, revision, hooks);
  }

  /** Every container, the web one first, so that nobody is served while its database goes away. */
  async stop(service: ServiceSpec, options: { holdRequests?: boolean } = {}): Promise<void> {
    const app = await definitionOf(this.options, service).catch(() => null);
    const { api } = this.options.engines.engineOf(service.server);
    const order = app ? [...app.containers].reverse().map((container) => container.name) : [];
    // The way in first (the proxy's route, or the front): nobody is sent to a container that is
    // going away. A restore's proxy holds the requests of its swap for the restored revision.
    if (await servedByProxy(this.options.db, service.id, service.server.id)) {
      if (options.holdRequests) await holdRequests(this.options, service.server, service.id);
      else await routeServer(this.options, service.server, { serviceId: service.id, target: null });
    }
    await stopFront(api, service.id, this.options.stopGraceMs);
    const containers = (await listAppContainers(api, service.id)).filter((container) => container.running)
      .sort((a, b) => order.indexOf(a.appService) - order.indexOf(b.appService));
    for (const container of containers) await stopContainer(api, container.id, this.options.stopGraceMs);
  }

  /** Everything of the service on its engine (containers, one-off containers, volumes, network) and its secrets. Idempotent. */
  async destroy(service: ServiceSpec): Promise<void> {
    const { api } = this.options.engines.engineOf(service.server);
    if (await servedByProxy(this.options.db, service.id, service.server.id)) await routeServer(this.options, service.server, { serviceId: service.id, target: null });
    await removeFront(api, service.id);
    for (const container of await listAppContainers(api, service.id)) await removeContainer(api, container.id);
    for (const helper of await listServiceContainers(api, service.id, 'helper')) await removeContainer(api, helper.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await removeNetworks(api, service.id);
    await deleteServiceSecrets(this.options.db, service.id);
  }

  async storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    await writeDockerState(this.options.db, this.options.secrets, service.id, { mail: credentials });
  }

  async secretValuesOf(service: ServiceSpec): Promise<string[]> {
    const { mail } = await readDockerState(this.options.db, this.options.secrets, service.id);
    const own = Object.values(await readServiceSecrets(this.options.db, this.options.secrets, service.id));
    const relay = await relayLoginOf(this.options.db, this.options.secrets, service.id);
    return [...(mail ? [mail.password] : []), ...own, ...(relay?.password ? [relay.password] : [])];
  }

  /**
   * One archive of the service's data (app-data.ts), kept in the backups volume of its engine.
   * Taken while the service keeps running where the definition can (a snapshot command); a
   * stopped service's database container is started for it and stopped again.
   */
  async backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    const app = await definitionOf(this.options, service);
    refuseWithoutSnapshot(app, 'Backups');
    await ensureServiceImages(this.options, service, app);
    const { api } = this.options.engines.engineOf(service.server);
    // A backup resumed after a crash starts over; the one-off containers of the crashed one go first.
    await removeAbandonedHelpers(api, service.id);
    await ensureNetworkAndVolumes(api, service, app, await currentGeneration(this.options, service));
    return withBackupSpoolFile(this.options.dataDir, destination, async (file) => {
      const packed = await writeServiceArchive(this.options, service, app, file, { emptyData: true });
      const web = app.containers.find((each) => each.name === app.web.service)!;
      const helper = await createHelper(api, { image: web.image, serviceId: service.id, serverId: service.server.id, mounts: [await ensureBackupsVolume(api, service.server.id)] });
      try {
        const path = await storeBackupOnEngine(api, helper.id, service.server, service.id, file, packed.sizeBytes, web.image, this.options.dataDir);
        return { path, sizeBytes: packed.sizeBytes, sha256: packed.sha256 };
      } finally {
        await helper.remove();
      }
    });
  }

  restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    return restoreService(this.options, { start: (each, startHooks) => this.start(each, startHooks), stop: (each) => this.stop(each, { holdRequests: true }) }, service, backup, hooks);
  }

  /**
   * `copy` becomes a service of its own (network, volumes, secrets of its own) holding the
   * source's data, neutralized (the definition's neutralize command: Tryton's scheduled jobs
   * off) before it ever starts; its mail goes to the mail catcher (mail-relay-of.ts). Its
   * database cluster is made anew with the copy's own password, so no secret of the source is
   * shared; the users and passwords in the data are the source's. A resumed copy starts over.
   */
  async copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    // Before anything is made: a copy whose containers cannot reach the mail catcher is refused, saying what to set.
    await this.options.containerMailRelay(copy.server);
    const app = await definitionOf(this.options, source);
    refuseWithoutSnapshot(app, 'Copies');
    if ((copy.app ?? null) !== (source.app ?? null)) throw new DriverError(`The copy does not run the app ${source.app} of the service it copies.`);
    // An app's copy runs exactly the images its source was made with; an image's copy, its own server's image.
    const copyApp = app.imageContract ? await definitionOf(this.options, copy, 'latest') : app;
    // The source's data is read on its engine, the copy made on its own (which may be another).
    const { api: sourceApi } = this.options.engines.engineOf(source.server);
    const { api } = this.options.engines.engineOf(copy.server);
    await ensureServiceImages(this.options, source, app);
    await ensureServiceImages(this.options, copy, copyApp, app.imageContract ? {} : { digestsOf: source.id });
    await removeAbandonedHelpers(sourceApi, source.id);
    await removeAbandonedHelpers(api, copy.id);
    for (const container of await listAppContainers(api, copy.id)) await removeContainer(api, container.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: copy.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await writeDockerState(this.options.db, this.options.secrets, copy.id, { volume: dataVolumeName(copy.id) });
    await ensureServiceSecrets(this.options.db, this.options.secrets, copy.id, copyApp.secrets);
    const file = join(this.options.dataDir, 'copies', `${copy.id}.tar.zst`);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      const packed = await writeServiceArchive(this.options, source, app, file);
      const compression = await verifyArchive(file, packed.sha256);
      await ensureNetwork(api, appNetworkName(copy.id), labelsOf({ serviceId: copy.id, serverId: copy.server.id, role: 'network' }));
      const manifest = await readAppManifest(file, compression, copyApp.imageContract ? appDataParts(copyApp).manifest : undefined);
      await ensureVolumes(api, copy, copyApp, 0, await schemaOfArchive(api, copyApp, manifest));
      await loadInto(this.options, api, copy, copyApp, 0, { file, compression, filesAtTop: manifest.filesAtTop ?? false }, { neutralize: true });
    } finally {
      rmSync(file, { force: true });
    }
  }
}
