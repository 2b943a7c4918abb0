// The services of a multi-container app definition (tryton: PostgreSQL and Tryton) on a Docker
// engine: what the Docker driver does for a service whose `app` is not the single-container
// demo. One labelled bridge network per service, one volume per definition volume, the
// definition's secrets generated at create and sealed (service-secrets.ts), the containers
// started in the definition's order (each one with a healthcheck waited for), the migrate
// command before the web container of a new revision first starts, and the service's front
// (service-front.ts) published on the service's port: its address is the service's url, and
// it forwards to the web container of the revision that is current.
//
// Backups, restores and copies move the app's data through app-data.ts: one archive of the
// database's dump and the app's files; a restore fills the next generation of the service's
// volumes, verified, before the one-row swap (docker_services.volume names the generation); a
// copy is a new service with its own network, volumes and secrets, filled the same way from its
// source and neutralized before its first start.
//
// A redeploy runs the definition as it is now (an operator's `admin add-app --replace` with a
// new image tag, or a newer image its registry has under the same tag, which a redeploy pulls,
// is what gives a service a new image; service-images.ts): the migrate command of the new image
// with the definition's migrate deadline, then the new web container beside the one serving,
// and the front switched once it answers. The other containers (the database) keep running.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findApp } from '../apps/app-registry.js';
import type { AppContainer, AppDefinition } from '../apps/app-definition.js';
import { initialCredentialsOf, sealInitialCredentials, type SealedInitialCredentials } from '../apps/initial-credentials.js';
import { renderEnvironment } from '../apps/render-environment.js';
import { smtpUri } from '../apps/smtp-uri.js';
import { staleContainer } from './stale-container.js';
import { mailRelayOf, type MailRelay, type MailRelaySources } from './mail-relay-of.js';
import { DriverError, type BackupFile, type RestoreHooks, type RunningService, type ServiceSpec, type ServiceStatus, type StartHooks } from '../driver.js';
import { readAppManifest, type AppArchiveManifest } from './app-archive.js';
import {
  createAppContainer, ensureNetwork, listAppContainers, removeNetworks, runAppCommand, waitEngineHealthy, type AppContainerSummary,
} from './app-containers.js';
import { appDataParts, imageIdsOf, loadAppArchive, refuseWithoutSnapshot, writeAppArchive, type AppDataTarget } from './app-data.js';
import { verifyArchive } from './archives.js';
import { ensureBackupsVolume, localBackupFile, storeBackupOnEngine, withBackupSpoolFile } from './backup-store.js';
import { containerLimitsOf } from './container-limits.js';
import {
  answersHealth, containerPid, createHelper, ensureVolume, keepRunning, listServiceContainers, listVolumes, removeAbandonedHelpers, removeContainer,
  removeVolume, startContainer, startOnEnginePort, stopContainer, waitHealthy,
} from './containers.js';
import { readDockerState, writeDockerState } from './docker-state.js';
import { ensureFront, findFront, frontStatus, removeFront, stopFront, switchFront } from './service-front.js';
import type { DockerApi } from './docker-api.js';
import { publishedHost } from './engine-address.js';
import type { EngineRegistry } from './engine-registry.js';
import { appCommandContainerName, appContainerName, appNetworkName, appVolumeName, dataVolumeName, generationOf, LABEL, labelsOf } from './labels.js';
import { choosePort } from './ports.js';
import { deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets } from './service-secrets.js';
import { ensureServiceImages, pinnedApp } from './service-images.js';
import { failLostStaging, restoreResumePoint, stagedByLabel } from './restore-resume.js';

/** Where its mail goes (mail-relay-of.ts: a copy's mail catcher, a production service's relay) besides the engine and the database. */
export interface AppServiceDriverOptions extends MailRelaySources {
  engines: EngineRegistry;
  takenPorts(): Promise<ReadonlySet<number>>;
  stopGraceMs: number;
  /** This node's data directory: where backups are written before they go to the engine, and a copy's archive while it is made. */
  dataDir: string;
}

/** True for a service the Docker driver runs from an app definition rather than from its server's image. */
export function runsAnApp(service: ServiceSpec): boolean {
  return typeof service.app === 'string' && service.app !== 'demo';
}

export class AppServiceDriver {
  constructor(private readonly options: AppServiceDriverOptions) {}

  /** The network, the volumes and the sealed secrets; the admin's first login, sealed, when the definition has one. */
  async provision(service: ServiceSpec): Promise<{ initialCredentials?: SealedInitialCredentials }> {
    const app = await this.appOf(service);
    const { api } = this.options.engines.engineOf(service.server);
    // Now, not at the first start: an image the engine lacks is pulled (its digest recorded), or a sentence says why not.
    await ensureServiceImages(this.options, service, app);
    await this.ensureNetworkAndVolumes(api, service, app, await this.generationOf(service));
    const values = await ensureServiceSecrets(this.options.db, this.options.secrets, service.id, app.secrets);
    const credentials = initialCredentialsOf(app, { ...values, TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name });
    return credentials ? { initialCredentials: sealInitialCredentials(this.options.secrets, service.id, credentials) } : {};
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    const app = await this.appOf(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const containers = await listAppContainers(api, service.id);
    if (await findFront(api, service.id)) return frontStatus(api, service.id, host, app.web.healthPath, containers);
    // A service started before fronts existed: its web container is published on the service's port itself.
    const running = containers.filter((container) => container.running);
    const web = running.filter((container) => container.appService === app.web.service).sort((a, b) => b.revision - a.revision);
    for (const container of web) {
      if (container.port !== null && await answersHealth(host, container.port, app.web.healthPath, service.id)) {
        const { pid } = await containerPid(api, container.id);
        return { state: 'running', pid, port: container.port, revision: container.revision, publishedHost: host };
      }
    }
    if (running[0]) return { state: 'starting', pid: (await containerPid(api, running[0].id)).pid };
    return { state: 'stopped' };
  }

  async start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    const app = await this.appOf(service);
    await ensureServiceImages(this.options, service, app);
    const { api } = this.options.engines.engineOf(service.server);
    const generation = await this.generationOf(service);
    await this.ensureNetworkAndVolumes(api, service, app, generation);
    await this.retireUnfronted(api, service, app);
    const listed = await listAppContainers(api, service.id);
    // The containers of the data a restore replaced go first: they mount volumes the service no
    // longer uses. So does another revision's web container (a crash's leftover): after a start,
    // this revision serves.
    const stale = (container: AppContainerSummary) => container.generation !== generation
      || (container.appService === app.web.service && container.revision !== service.revision);
    for (const container of listed.filter(stale)) await removeContainer(api, container.id);
    const before = listed.filter((container) => !stale(container));
    try {
      const { running } = await this.runRevision(api, service, app, before, hooks, generation);
      return running;
    } catch (error) {
      if (error instanceof MigrateFailed) throw new DriverError(`${error.reason}, so the service was not started.`, false, { cause: error });
      throw error;
    }
  }

  /**
   * Runs `revision` from the definition as it is now: the database kept as it runs, the migrate
   * command of the new image with the definition's own deadline, the new web container beside
   * the one serving, and the front switched to it once it answers. Any failure before the
   * switch leaves the revision before serving, untouched, and says so.
   */
  async redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    // The definition's own names, pulled again: a redeploy takes the newest image under each tag.
    const app = await this.appOf(service, 'latest');
    const images = await ensureServiceImages(this.options, service, app, { latest: true, record: false });
    const { api } = this.options.engines.engineOf(service.server);
    const generation = await this.generationOf(service);
    await this.ensureNetworkAndVolumes(api, service, app, generation);
    await this.retireUnfronted(api, service, app);
    const before = (await listAppContainers(api, service.id)).filter((container) => container.generation === generation);
    const webOf = (container: AppContainerSummary) => container.appService === app.web.service;
    const serving = before.filter((container) => webOf(container) && container.running && container.revision !== revision)
      .sort((a, b) => b.revision - a.revision);
    let started: { containerId: string; running: RunningService };
    try {
      started = await this.runRevision(api, { ...service, revision }, app, before, hooks, generation);
    } catch (error) {
      const failed = (await listAppContainers(api, service.id)).filter((container) => webOf(container) && container.revision === revision);
      for (const container of failed) await removeContainer(api, container.id);
      if (serving.length === 0) {
        if (error instanceof MigrateFailed) throw new DriverError(`${error.reason}, so the service was not started.`, false, { cause: error });
        throw error;
      }
      throw new DriverError(`Revision ${revision} did not start (${reasonOf(error)}), so revision ${serving[0]!.revision} keeps serving.`,
        false, { cause: error });
    }
    const others = (await listAppContainers(api, service.id)).filter((container) => webOf(container) && container.id !== started.containerId);
    for (const container of others) await removeContainer(api, container.id);
    await images.record();
    return started.running;
  }

  /** Every container, the web one first, so that nobody is served while its database goes away. */
  async stop(service: ServiceSpec): Promise<void> {
    const app = await this.appOf(service).catch(() => null);
    const { api } = this.options.engines.engineOf(service.server);
    const order = app ? [...app.containers].reverse().map((container) => container.name) : [];
    await stopFront(api, service.id, this.options.stopGraceMs);
    const containers = (await listAppContainers(api, service.id)).filter((container) => container.running)
      .sort((a, b) => order.indexOf(a.appService) - order.indexOf(b.appService));
    for (const container of containers) await stopContainer(api, container.id, this.options.stopGraceMs);
  }

  /** Everything of the service on its engine (containers, one-off containers, volumes, network) and its secrets. Idempotent. */
  async destroy(service: ServiceSpec): Promise<void> {
    const { api } = this.options.engines.engineOf(service.server);
    await removeFront(api, service.id);
    for (const container of await listAppContainers(api, service.id)) await removeContainer(api, container.id);
    for (const helper of await listServiceContainers(api, service.id, 'helper')) await removeContainer(api, helper.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await removeNetworks(api, service.id);
    await deleteServiceSecrets(this.options.db, service.id);
  }

  async secretValuesOf(service: ServiceSpec): Promise<string[]> {
    return Object.values(await readServiceSecrets(this.options.db, this.options.secrets, service.id));
  }

  /**
   * One archive of the service's data (app-data.ts), kept on the engine as every Docker backup.
   * The dump is taken where it reaches the database while the service keeps running; a stopped
   * service's database container is started for it and stopped again.
   */
  async backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    const app = await this.appOf(service);
    refuseWithoutSnapshot(app, 'Backups');
    await ensureServiceImages(this.options, service, app);
    const { api, address } = this.options.engines.engineOf(service.server);
    // A backup resumed after a crash starts over; the one-off containers of the crashed one go first.
    await removeAbandonedHelpers(api, service.id);
    const generation = await this.generationOf(service);
    await this.ensureNetworkAndVolumes(api, service, app, generation);
    const values = await this.valuesOf(service, publishedHost(address), service.port);
    return withBackupSpoolFile(this.options.dataDir, destination, async (file) => {
      const packed = await this.withDatabaseRunning(api, service, app, values, generation,
        () => writeAppArchive(this.dataTarget(api, service, app, values, generation), file));
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

  /**
   * The backup is checked whole (checksum, archive, manifest), then loaded into the next
   * generation of the service's volumes through a staged database, where the definition's verify
   * and restore commands run; only then is the service stopped, the safety backup taken and the
   * generation swapped in one row. A failure before the swap leaves the service as it was; a
   * start that fails after it puts the previous generation back and starts on it.
   */
  async restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    const app = await this.appOf(service);
    refuseWithoutSnapshot(app, 'Restores');
    await ensureServiceImages(this.options, service, app);
    const { api } = this.options.engines.engineOf(service.server);
    const current = await this.generationOf(service);
    const staged = current + 1;
    const [first] = app.volumes;
    const point = first === undefined ? 'stage'
      : await restoreResumePoint(api, hooks, { current: appVolumeName(service.id, first, current), staged: appVolumeName(service.id, first, staged) });
    // Whether it serves (its web container), not whether a container runs: a crashed attempt's
    // safety backup may have left the database of a stopped service running.
    const wasRunning = hooks.ranBefore
      || (await listAppContainers(api, service.id)).some((container) => container.running && container.appService === app.web.service);
    if (point === 'lost') return failLostStaging((error) => this.startAgain(service, hooks, error), wasRunning);
    // Resumed after its swap: the data it replaced is the generation before, unless a start on the restored data already dropped it.
    if (point === 'start') {
      const kept = first !== undefined && (await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' }))
        .includes(appVolumeName(service.id, first, current - 1));
      return this.runOnRestored(api, service, app, hooks, wasRunning, { restored: current, previous: kept ? current - 1 : null });
    }
    if (point === 'stage') await this.stage(api, service, app, backup, staged, hooks);
    await this.stop(service);
    try {
      await hooks.beforeSwap({ hasData: true });
    } catch (error) {
      await this.dropGeneration(api, service, app, staged).catch(() => undefined);
      if (wasRunning) await this.startAgain(service, hooks, error);
      throw error;
    }
    await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: dataVolumeName(service.id, staged) });
    return this.runOnRestored(api, service, app, hooks, wasRunning, { restored: staged, previous: current });
  }

  /** The backup checked whole and loaded into the volumes of `generation` (labelled as this restore's), or nothing changed. */
  private async stage(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, backup: { path: string; sha256: string }, generation: number, hooks: RestoreHooks,
  ): Promise<void> {
    const local = await localBackupFile(this.options.db, this.options.dataDir, backup);
    try {
      const compression = await verifyArchive(local.path, backup.sha256);
      const manifest = await readAppManifest(local.path, compression);
      refuseOtherApp(manifest, app);
      // Resumed after a crash: the generation it was staging starts over, once the crashed attempt's containers have let go of it.
      await removeAbandonedHelpers(api, service.id);
      await this.dropGeneration(api, service, app, generation);
      await this.ensureVolumes(api, service, app, generation, await this.schemaOfArchive(api, app, manifest), stagedByLabel(hooks));
      try {
        await this.loadInto(api, service, app, generation, { file: local.path, compression }, { neutralize: false });
      } catch (error) {
        await this.dropGeneration(api, service, app, generation).catch(() => undefined);
        throw new DriverError(`The backup could not be restored (${reasonOf(error)}), so nothing was changed.`, false, { cause: error });
      }
    } finally {
      // This node's copy of the backup has served (the engine keeps the backup).
      local.release(true);
    }
  }

  /** After the swap: running again on the restored generation if it ran, or back on the previous one (when still there) if that fails. */
  private async runOnRestored(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, hooks: StartHooks, wasRunning: boolean, generations: { restored: number; previous: number | null },
  ): Promise<RunningService | null> {
    if (!wasRunning) {
      await this.dropGenerationsBut(api, service, app, generations.restored);
      return null;
    }
    try {
      const running = await this.start(service, hooks);
      await this.dropGenerationsBut(api, service, app, generations.restored);
      return running;
    } catch (error) {
      if (generations.previous === null) throw error;
      await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: dataVolumeName(service.id, generations.previous) });
      await this.startAgain(service, hooks, error);
      await this.dropGeneration(api, service, app, generations.restored).catch(() => undefined);
      throw new DriverError(`The service did not start on the restored data (${reasonOf(error)}), so its previous data was put back ` +
        'and it was started again. Nothing was restored.', false, { cause: error });
    }
  }

  /**
   * `copy` becomes a service of its own (network, volumes, secrets of its own) holding the
   * source's data, neutralized (the definition's neutralize command: Tryton's scheduled jobs
   * off) before it ever starts; its mail goes to the mail catcher (valuesOf). Its database
   * cluster is made anew with the copy's own password, so no secret of the source is shared;
   * the users and passwords in the data are the source's. A resumed copy starts over.
   */
  async copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    const app = await this.appOf(source);
    refuseWithoutSnapshot(app, 'Copies');
    if (copy.app !== source.app) throw new DriverError(`The copy does not run the app ${source.app} of the service it copies.`);
    // The source's data is read on its engine, the copy made on its own (which may be another).
    const { api: sourceApi, address: sourceAddress } = this.options.engines.engineOf(source.server);
    const { api } = this.options.engines.engineOf(copy.server);
    // The copy runs exactly the images its source was made with.
    await ensureServiceImages(this.options, source, app);
    await ensureServiceImages(this.options, copy, app, { digestsOf: source.id });
    await removeAbandonedHelpers(sourceApi, source.id);
    await removeAbandonedHelpers(api, copy.id);
    for (const container of await listAppContainers(api, copy.id)) await removeContainer(api, container.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: copy.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await writeDockerState(this.options.db, this.options.secrets, copy.id, { volume: dataVolumeName(copy.id) });
    await ensureServiceSecrets(this.options.db, this.options.secrets, copy.id, app.secrets);
    const file = join(this.options.dataDir, 'copies', `${copy.id}.tar.zst`);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      const generation = await this.generationOf(source);
      const values = await this.valuesOf(source, publishedHost(sourceAddress), source.port);
      const packed = await this.withDatabaseRunning(sourceApi, source, app, values, generation,
        () => writeAppArchive(this.dataTarget(sourceApi, source, app, values, generation), file));
      const compression = await verifyArchive(file, packed.sha256);
      await ensureNetwork(api, appNetworkName(copy.id), labelsOf({ serviceId: copy.id, serverId: copy.server.id, role: 'network' }));
      await this.ensureVolumes(api, copy, app, 0, await this.schemaOfArchive(api, app, await readAppManifest(file, compression)));
      await this.loadInto(api, copy, app, 0, { file, compression }, { neutralize: true });
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** How app-data.ts makes the service's containers: over volumes of `generation`, on `network` (the service's own unless staging). */
  private dataTarget(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>, generation: number, network = appNetworkName(service.id),
  ): AppDataTarget {
    return {
      api, app, stopGraceMs: this.options.stopGraceMs,
      settingsOf: (name) => this.shared(service, app.containers.find((each) => each.name === name)!, values, generation, network),
    };
  }

  /**
   * Runs `work` while the service's database container of `generation` runs. While the service
   * serves, its database is used as it is; otherwise it is started for the work and stopped
   * after (also one a crashed backup or copy had started and left running).
   */
  private async withDatabaseRunning<T>(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>, generation: number, work: () => Promise<T>,
  ): Promise<T> {
    const { database } = appDataParts(app);
    if (!database) return work();
    const all = await listAppContainers(api, service.id);
    const containers = all.filter((each) => each.appService === database.name && each.generation === generation);
    const serving = all.some((each) => each.appService === app.web.service && each.running && each.generation === generation);
    if (serving && containers.some((each) => each.running)) return work();
    const existing = containers.find((each) => each.running) ?? containers.find((each) => each.revision === service.revision);
    const id = await this.startSupporting(api, service, app, database, existing, { values, hosts: [] }, generation);
    try {
      return await work();
    } finally {
      await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
    }
  }

  /** Fills the (empty) volumes of `generation` from a checked archive, on a staging network of their own, so the service's database is never in the way. */
  private async loadInto(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number, archive: Parameters<typeof loadAppArchive>[1], options: { neutralize: boolean },
  ): Promise<void> {
    const { address } = this.options.engines.engineOf(service.server);
    const network = `${appNetworkName(service.id)}-g${generation}`;
    await ensureNetwork(api, network, labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
    try {
      const values = await this.valuesOf(service, publishedHost(address), service.port);
      await loadAppArchive(this.dataTarget(api, service, app, values, generation, network), archive, options);
    } finally {
      await api.json('DELETE', `/networks/${network}`, { accept: [404] }).catch(() => undefined);
    }
  }

  /** The containers and volumes of one generation of the service's data, and its staging network. */
  private async dropGeneration(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<void> {
    for (const container of await listAppContainers(api, service.id)) {
      if (container.generation === generation) await removeContainer(api, container.id);
    }
    for (const volume of app.volumes) await removeVolume(api, appVolumeName(service.id, volume, generation));
    await api.json('DELETE', `/networks/${appNetworkName(service.id)}-g${generation}`, { accept: [404] });
  }

  /** After a swap: the data the restore replaced (and a crash's staged generation), with the containers on it. */
  private async dropGenerationsBut(api: DockerApi, service: ServiceSpec, app: AppDefinition, keep: number): Promise<void> {
    for (const container of await listAppContainers(api, service.id)) {
      if (container.generation !== keep) await removeContainer(api, container.id);
    }
    const kept = new Set(app.volumes.map((volume) => appVolumeName(service.id, volume, keep)));
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) {
      if (!kept.has(volume)) await removeVolume(api, volume);
    }
  }

  private async startAgain(service: ServiceSpec, hooks: StartHooks, failure: unknown): Promise<void> {
    try {
      await this.start(service, hooks);
    } catch (startError) {
      throw new DriverError(`${reasonOf(failure)}. Starting the service again on its own data failed too: ${reasonOf(startError)}`, false, { cause: startError });
    }
  }

  /** The service's app, each image named by the digest the service was made with; `latest`: by the definition's own names. */
  private async appOf(service: ServiceSpec, images: 'pinned' | 'latest' = 'pinned'): Promise<AppDefinition> {
    const app = await findApp(this.options.db, service.app as string);
    if (!app) throw new DriverError(`The app ${service.app} of this service is no longer registered; the operator can add it again (admin add-app).`);
    return images === 'latest' ? app : pinnedApp(this.options.db, service.id, app);
  }

  private async ensureNetworkAndVolumes(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<void> {
    await ensureNetwork(api, appNetworkName(service.id), labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
    await this.ensureVolumes(api, service, app, generation);
  }

  private async ensureVolumes(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number, schemaOf?: string, stagedBy: Record<string, string> = {},
  ): Promise<void> {
    for (const volume of app.volumes) {
      await ensureVolume(api, appVolumeName(service.id, volume, generation), {
        ...labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }), ...(schemaOf ? { [LABEL.schemaOf]: schemaOf } : {}), ...stagedBy,
      });
    }
  }

  /**
   * The image of the migrate step whose schema an archive's data has, when every image of the
   * app is the one the backup was taken under (then the first start on it skips the migration).
   */
  private async schemaOfArchive(api: DockerApi, app: AppDefinition, manifest: AppArchiveManifest): Promise<string | undefined> {
    if (!app.commands.migrate || !manifest.images) return undefined;
    const now = await imageIdsOf(api, app);
    const same = app.containers.every((container) => now[container.name] !== '' && manifest.images?.[container.name] === now[container.name]);
    return same ? now[app.commands.migrate.service] : undefined;
  }

  /** True when a restore or copy filled this generation with data whose schema the migrate step's image made. */
  private async schemaIsCurrent(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<boolean> {
    const [first] = app.volumes;
    if (!first || !app.commands.migrate) return false;
    const volume = await api.json<{ Labels: Record<string, string> | null } | undefined>('GET', `/volumes/${appVolumeName(service.id, first, generation)}`, { accept: [404] });
    const schemaOf = volume?.Labels?.[LABEL.schemaOf];
    return schemaOf !== undefined && schemaOf === (await imageIdsOf(api, app))[app.commands.migrate.service];
  }

  /** The generation of volumes the service's containers use now: 0 until its first restore. */
  private async generationOf(service: ServiceSpec): Promise<number> {
    return generationOf((await readDockerState(this.options.db, this.options.secrets, service.id)).volume);
  }

  /**
   * The values `${NAME}` may name: the service's secrets (opened now) and the built-ins. The mail
   * ones only from a start or redeploy (`smtp`, mailRelayOf): the data steps' containers send no
   * mail, so a backup never waits on the relay's name nor on the mail catcher.
   */
  private async valuesOf(service: ServiceSpec, host: string, port: number | null, smtp: MailRelay | null = null): Promise<Record<string, string>> {
    const secrets = await readServiceSecrets(this.options.db, this.options.secrets, service.id);
    return {
      ...secrets,
      TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name, TEAMINFRA_REVISION: String(service.revision),
      TEAMINFRA_PUBLIC_URL: port === null ? '' : `http://${host}:${port}`,
      TEAMINFRA_SMTP_HOST: smtp?.host ?? '', TEAMINFRA_SMTP_PORT: smtp ? String(smtp.port) : '',
      TEAMINFRA_SMTP_USER: smtp?.user ?? '', TEAMINFRA_SMTP_PASSWORD: smtp?.password ?? '', TEAMINFRA_SMTP_URI: smtpUri(smtp),
    };
  }

  private shared(
    service: ServiceSpec, container: AppContainer, values: Record<string, string>, generation: number, network = appNetworkName(service.id),
    extraHosts: readonly string[] = [],
  ) {
    return {
      serviceId: service.id, serverId: service.server.id, revision: service.revision, container, network, generation, extraHosts,
      volumeOf: (volume: string) => appVolumeName(service.id, volume, generation), env: renderEnvironment(container, values),
      limits: containerLimitsOf(service.server.docker?.limits),
    };
  }

  /**
   * Every container of the definition in its order, for `service.revision`: the front on the
   * service's port, each other container (the database) adopted whatever revision made it, and
   * the web container of this revision (made after the migrate command when it does not exist
   * yet), healthy, and the one the front forwards to.
   */
  private async runRevision(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, before: AppContainerSummary[], hooks: StartHooks, generation: number,
  ): Promise<{ containerId: string; running: RunningService }> {
    const { address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const front = await ensureFront(api, {
      serviceId: service.id, serverId: service.server.id, image: await this.options.engines.frontImageOf(service.server),
      port: service.port, targetPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '',
      choosePort: async () => choosePort(address, await this.options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
    });
    // Rendered with the port people use, for links the app writes in its emails; every container
    // may send mail, so each has the relay's name pinned to the address checked now.
    const smtp = await mailRelayOf(this.options, service);
    const values = await this.valuesOf(service, host, front.port, smtp);
    const hosts = smtp?.pinnedHosts ?? [];
    let result: { containerId: string; running: RunningService } | undefined;
    for (const container of app.containers) {
      if (container.name === app.web.service) {
        const existing = before.find((each) => each.appService === container.name && each.revision === service.revision);
        result = await this.startWeb(api, service, app, container, existing, hooks, host, { values, hosts }, front, generation);
      } else {
        await this.startSupporting(api, service, app, container, await this.adopted(api, before, container.name), { values, hosts }, generation, timedBy(hooks));
      }
    }
    if (!result) throw new DriverError(`The app ${app.name} has no web container named ${app.web.service}.`);
    for (const container of await listAppContainers(api, service.id)) if (container.running) await keepRunning(api, container.id);
    return result;
  }

  /**
   * The container of a supporting service (the database) to keep: the running one, else the
   * newest. Any other goes: two database servers must never open the same volume.
   */
  private async adopted(api: DockerApi, before: AppContainerSummary[], appService: string): Promise<AppContainerSummary | undefined> {
    const candidates = before.filter((each) => each.appService === appService)
      .sort((a, b) => Number(b.running) - Number(a.running) || b.revision - a.revision);
    for (const extra of candidates.slice(1)) await removeContainer(api, extra.id);
    return candidates[0];
  }

  /** A service last started before fronts existed: its web container holds the service's port, which the front needs. */
  private async retireUnfronted(api: DockerApi, service: ServiceSpec, app: AppDefinition): Promise<void> {
    if (await findFront(api, service.id)) return;
    for (const container of await listAppContainers(api, service.id)) {
      if (container.appService === app.web.service) await removeContainer(api, container.id);
    }
  }

  /** A container other than the web one (the database): running, and healthy when it has a healthcheck (a step of its own in a start). */
  private async startSupporting(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    { values, hosts }: Rendered, generation: number, timed: Timed = untimed,
  ): Promise<string> {
    const id = existing?.id ?? await createAppContainer(api, {
      ...this.shared(service, container, values, generation, appNetworkName(service.id), hosts),
      name: appContainerName(service.id, service.revision, container.name, generation),
    });
    if (!existing?.running) await startContainer(api, id);
    if (container.healthcheck) {
      await timed(`Waited for the ${container.name} container to be healthy`, () => waitEngineHealthy(api, id, container.name, app.deadlines.startMs));
    }
    return id;
  }

  /**
   * The definition's migrate command, in a container of the revision's image, within the migrate
   * deadline (not the start's). The container is kept, exited, until the next migration (or the
   * data it ran on goes): its output stays in the service's logs as `<service>:migrate`.
   */
  private async migrate(api: DockerApi, service: ServiceSpec, app: AppDefinition, { values, hosts }: Rendered, generation: number): Promise<void> {
    const command = app.commands.migrate!;
    const container = app.containers.find((each) => each.name === command.service)!;
    const logAs = migrateLogName(command.service);
    for (const earlier of await listAppContainers(api, service.id)) if (earlier.appService === logAs) await removeContainer(api, earlier.id);
    const { exitCode, output } = await runAppCommand(api, {
      ...this.shared(service, container, values, generation, appNetworkName(service.id), hosts), command, what: `The app's migrate command`, timeoutMs: app.deadlines.migrateMs,
      keepAs: { name: appCommandContainerName(service.id, service.revision, 'migrate', generation), appService: logAs, revision: service.revision, generation },
    }).catch((error: unknown) => {
      throw error instanceof DriverError ? new MigrateFailed(error.reason.replace(/\.$/, ''), false, { cause: error }) : error;
    });
    if (exitCode !== 0) throw new MigrateFailed(`The app's migrate command failed (exit code ${exitCode})${output}`);
  }

  /**
   * The web container of this revision, running and healthy on a port the engine picks, then the
   * one the front forwards to, and answering through the front. The migrate command runs first
   * when the container does not exist yet (a new revision, or a first start).
   */
  private async startWeb(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    hooks: StartHooks, host: string, rendered: Rendered, front: { id: string; port: number }, generation: number,
  ): Promise<{ containerId: string; running: RunningService }> {
    const settings = (image: string) => this.shared(service, { ...container, image }, rendered.values, generation, appNetworkName(service.id), rendered.hosts);
    const { address } = this.options.engines.engineOf(service.server);
    const target = (port: number) => ({ host, port, path: app.web.healthPath, serviceId: service.id });
    let id = existing?.id;
    let pid: number | null = null;
    if (existing?.running && existing.port !== null) {
      pid = await waitHealthy(api, existing.id, target(existing.port), app.deadlines.startMs).catch(() => null);
    }
    // A stopped web container made with another relay, address or limits than the service has
    // now is made again, from the image it was made from; its revision's migration ran before it
    // was first made, so none runs for it.
    let image = container.image;
    if (pid === null && existing && !existing.running) {
      const stale = await staleContainer(api, existing.id, settings(container.image));
      if (stale) {
        await removeContainer(api, existing.id);
        id = undefined;
        image = stale.image;
      }
    }
    if (pid === null) {
      // Before the web container of this revision first exists: the database is made, or upgraded
      // by a new image, unless a restore or copy filled it with data the same image made.
      if (existing === undefined && app.commands.migrate && !(await this.schemaIsCurrent(api, service, app, generation))) {
        await timedBy(hooks)(`Ran the app's migrate command`, () => this.migrate(api, service, app, rendered, generation),
          `Its output is in the service's logs as the container ${migrateLogName(app.commands.migrate.service)}.`);
      }
      id ??= await createAppContainer(api, {
        ...settings(image), name: appContainerName(service.id, service.revision, container.name, generation),
        publish: { containerPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '', hostPort: null },
      });
      const published = await startOnEnginePort(api, id, app.web.port);
      await hooks.spawned((await containerPid(api, id)).pid);
      try {
        pid = await timedBy(hooks)(`Waited for the ${container.name} container to answer ${app.web.healthPath}`,
          () => waitHealthy(api, id as string, target(published), app.deadlines.startMs));
      } catch (error) {
        await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
        throw error;
      }
    }
    await switchFront(api, service.id, id as string, this.options.stopGraceMs);
    await waitHealthy(api, front.id, target(front.port), app.deadlines.startMs);
    return { containerId: id as string, running: { pid, port: front.port, revision: service.revision, publishedHost: host } };
  }
}

/** A backup of another app (or of another shape of this one) is refused before anything is touched. */
function refuseOtherApp(manifest: AppArchiveManifest, app: AppDefinition): void {
  const { manifest: expected } = appDataParts(app);
  if (manifest.app !== app.name) {
    throw new DriverError(`The backup was taken of a service of the app ${manifest.app}, not ${app.name}, so it cannot be restored into this service.`);
  }
  if (JSON.stringify([...manifest.fileVolumes].sort()) !== JSON.stringify([...expected.fileVolumes].sort())
    || JSON.stringify([...manifest.databaseVolumes].sort()) !== JSON.stringify([...expected.databaseVolumes].sort())) {
    throw new DriverError(`The backup holds the volumes ${[...manifest.databaseVolumes, ...manifest.fileVolumes].join(', ')}, but the app ${app.name} ` +
      `now has ${[...expected.databaseVolumes, ...expected.fileVolumes].join(', ')}, so it cannot be restored into this service.`);
  }
}

/** A start's rendering of the definition: the values `${NAME}` names, and the /etc/hosts entries that pin the relay's name. */
interface Rendered { values: Record<string, string>; hosts: readonly string[] }

/** Runs one part of a start as a step of its own (StartHooks.timed). */
type Timed = <T>(step: string, work: () => Promise<T>, detail?: string) => Promise<T>;
const untimed: Timed = (_step, work) => work();

function timedBy(hooks: StartHooks): Timed {
  return hooks.timed ? (step, work, detail) => hooks.timed!(step, work, detail) : untimed;
}

/** How the logs name the kept container of an app's migrate command: never a Compose service name (those have no colon). */
function migrateLogName(service: string): string {
  return `${service}:migrate`;
}

/** A migrate command that failed or ran out of time: its reason, which the caller ends with what became of the service. */
class MigrateFailed extends DriverError {}

function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : error instanceof Error && 'reason' in error ? String(error.reason) : 'an internal error').replace(/\.$/, '');
}
