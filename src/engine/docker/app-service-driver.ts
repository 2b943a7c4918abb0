// The services of a multi-container app definition (tryton: PostgreSQL and Tryton) on a Docker
// engine: what the Docker driver does for a service whose `app` is not the single-container
// demo. One labelled bridge network per service, one volume per definition volume, the
// definition's secrets generated at create and sealed (service-secrets.ts), the containers
// started in the definition's order (each one with a healthcheck waited for), the migrate
// command before the web container of a new revision first starts, and the web container
// published on the service's port: its address is the service's url.
//
// Backups, restores and copies move the app's data through app-data.ts: one archive of the
// database's dump and the app's files; a restore fills the next generation of the service's
// volumes, verified, before the one-row swap (docker_services.volume names the generation); a
// copy is a new service with its own network, volumes and secrets, filled the same way from its
// source and neutralized before its first start.
//
// Not yet: redeploy of such a service. It fails at once with a sentence (`notSupported`).
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { findApp } from '../apps/app-registry.js';
import type { AppContainer, AppDefinition } from '../apps/app-definition.js';
import { ADMIN_PASSWORD_SECRET, sealInitialCredentials, type SealedInitialCredentials } from '../apps/initial-credentials.js';
import { renderEnvironment } from '../apps/render-environment.js';
import { smtpUri } from '../apps/smtp-uri.js';
import { DriverError, type BackupFile, type RestoreHooks, type RunningService, type ServiceSpec, type ServiceStatus, type StartHooks } from '../driver.js';
import { readAppManifest, type AppArchiveManifest } from './app-archive.js';
import {
  createAppContainer, ensureNetwork, listAppContainers, removeNetworks, runAppCommand, waitEngineHealthy, type AppContainerSummary,
} from './app-containers.js';
import { appDataParts, imageIdsOf, loadAppArchive, refuseWithoutSnapshot, writeAppArchive, type AppDataTarget } from './app-data.js';
import { verifyArchive } from './archives.js';
import { backupsMount, localBackupFile, storeBackupOnEngine } from './backup-store.js';
import { containerLimitsOf } from './container-limits.js';
import {
  answersHealth, containerPid, createHelper, ensureVolume, keepRunning, listServiceContainers, listVolumes, removeAbandonedHelpers, removeContainer,
  removeVolume, startContainer, startPublished, stopContainer, waitHealthy,
} from './containers.js';
import { readDockerState, writeDockerState } from './docker-state.js';
import type { DockerApi } from './docker-api.js';
import { publishedHost } from './engine-address.js';
import type { EngineRegistry } from './engine-registry.js';
import { appContainerName, appNetworkName, appVolumeName, dataVolumeName, generationOf, LABEL, labelsOf } from './labels.js';
import { choosePort } from './ports.js';
import { deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets } from './service-secrets.js';

export interface AppServiceDriverOptions {
  db: Kysely<Database>;
  secrets: SecretBox;
  engines: EngineRegistry;
  takenPorts(): Promise<ReadonlySet<number>>;
  stopGraceMs: number;
  /** This node's data directory: where backups are written before they go to the engine, and a copy's archive while it is made. */
  dataDir: string;
  /** "host:port" of the mail catcher as a container reaches it, while it runs; else null. A copy's only relay. */
  containerMailRelay(): string | null;
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
    const { api, address } = this.options.engines.engineOf(service.server);
    // Said now, not at the first start: no registry is reachable, so a missing image is the operator's to build.
    for (const image of new Set(app.containers.map((container) => container.image))) {
      const found = await api.json<object | undefined>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] });
      if (!found) {
        throw new DriverError(`The image ${image} of the app ${app.name} is not on the Docker engine ${address.text}; the operator builds it ` +
          `with "teaminfra admin build-app-images --app ${app.name} --docker-host ${address.text}", then create the service again.`);
      }
    }
    await this.ensureNetworkAndVolumes(api, service, app, await this.generationOf(service));
    const values = await ensureServiceSecrets(this.options.db, this.options.secrets, service.id, app.secrets);
    const admin = values[ADMIN_PASSWORD_SECRET];
    return admin === undefined ? {} : { initialCredentials: sealInitialCredentials(this.options.secrets, service.id, admin) };
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    const app = await this.appOf(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const running = (await listAppContainers(api, service.id)).filter((container) => container.running);
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
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const generation = await this.generationOf(service);
    await this.ensureNetworkAndVolumes(api, service, app, generation);
    const before = await listAppContainers(api, service.id);
    // Another revision's containers (a crash's leftovers) go first: they hold the same volumes. So do
    // the containers of the data a restore replaced: they mount volumes the service no longer uses.
    const isMine = (container: AppContainerSummary) => container.revision === service.revision && container.generation === generation;
    for (const stale of before.filter((container) => !isMine(container))) await removeContainer(api, stale.id);
    const mine = before.filter(isMine);
    const values = await this.valuesOf(service, host, service.port);
    let result: RunningService | undefined;
    for (const container of app.containers) {
      if (container.name === app.web.service) {
        const existing = mine.find((each) => each.appService === container.name);
        // Before the web container of this revision first exists: the database is made, or upgraded by a new image.
        if (!existing && app.commands.migrate && !(await this.schemaIsCurrent(api, service, app, generation))) {
          await this.migrate(api, service, app, values, generation);
        }
        result = await this.startWeb(api, service, app, container, existing, hooks, host, generation);
      } else {
        await this.startSupporting(api, service, app, container, mine.find((each) => each.appService === container.name), values, generation);
      }
    }
    if (!result) throw new DriverError(`The app ${app.name} has no web container named ${app.web.service}.`);
    for (const container of await listAppContainers(api, service.id)) await keepRunning(api, container.id);
    return result;
  }

  /** Every container, the web one first, so that nobody is served while its database goes away. */
  async stop(service: ServiceSpec): Promise<void> {
    const app = await this.appOf(service).catch(() => null);
    const { api } = this.options.engines.engineOf(service.server);
    const order = app ? [...app.containers].reverse().map((container) => container.name) : [];
    const containers = (await listAppContainers(api, service.id)).filter((container) => container.running)
      .sort((a, b) => order.indexOf(a.appService) - order.indexOf(b.appService));
    for (const container of containers) await stopContainer(api, container.id, this.options.stopGraceMs);
  }

  /** Everything of the service on its engine (containers, one-off containers, volumes, network) and its secrets. Idempotent. */
  async destroy(service: ServiceSpec): Promise<void> {
    const { api } = this.options.engines.engineOf(service.server);
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
    const { api, address } = this.options.engines.engineOf(service.server);
    // A backup resumed after a crash starts over; the one-off containers of the crashed one go first.
    await removeAbandonedHelpers(api, service.id);
    const file = `${destination.replace(/\.sqlite\.zst$/, '')}.tar.zst`;
    mkdirSync(dirname(file), { recursive: true });
    const generation = await this.generationOf(service);
    await this.ensureNetworkAndVolumes(api, service, app, generation);
    const values = await this.valuesOf(service, publishedHost(address), service.port);
    const packed = await this.withDatabaseRunning(api, service, app, values, generation,
      () => writeAppArchive(this.dataTarget(api, service, app, values, generation), file));
    const web = app.containers.find((each) => each.name === app.web.service)!;
    const helper = await createHelper(api, { image: web.image, serviceId: service.id, serverId: service.server.id, mounts: [backupsMount(service.server.id)] });
    try {
      const path = await storeBackupOnEngine(api, helper.id, service.server, service.id, file, packed.sizeBytes, web.image);
      return { path, sizeBytes: packed.sizeBytes, sha256: packed.sha256 };
    } finally {
      await helper.remove();
    }
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
    const { api } = this.options.engines.engineOf(service.server);
    const local = await localBackupFile(this.options.db, this.options.dataDir, backup);
    const compression = await verifyArchive(local, backup.sha256);
    const manifest = await readAppManifest(local, compression);
    refuseOtherApp(manifest, app);
    const current = await this.generationOf(service);
    const staged = current + 1;
    // Resumed after a crash: the generation it was staging starts over, once the crashed attempt's containers have let go of it.
    await removeAbandonedHelpers(api, service.id);
    await this.dropGeneration(api, service, app, staged);
    await this.ensureVolumes(api, service, app, staged, await this.schemaOfArchive(api, app, manifest));
    try {
      await this.loadInto(api, service, app, staged, { file: local, compression }, { neutralize: false });
    } catch (error) {
      await this.dropGeneration(api, service, app, staged).catch(() => undefined);
      throw new DriverError(`The backup could not be restored (${reasonOf(error)}), so nothing was changed.`, false, { cause: error });
    }
    // Whether it serves (its web container), not whether a container runs: a crashed attempt's
    // safety backup may have left the database of a stopped service running.
    const wasRunning = hooks.ranBefore
      || (await listAppContainers(api, service.id)).some((container) => container.running && container.appService === app.web.service);
    await this.stop(service);
    try {
      await hooks.beforeSwap({ hasData: true });
    } catch (error) {
      await this.dropGeneration(api, service, app, staged).catch(() => undefined);
      if (wasRunning) await this.startAgain(service, hooks, error);
      throw error;
    }
    await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: dataVolumeName(service.id, staged) });
    if (!wasRunning) {
      await this.dropGenerationsBut(api, service, app, staged);
      return null;
    }
    try {
      const running = await this.start(service, hooks);
      await this.dropGenerationsBut(api, service, app, staged);
      return running;
    } catch (error) {
      await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: dataVolumeName(service.id, current) });
      await this.startAgain(service, hooks, error);
      await this.dropGeneration(api, service, app, staged).catch(() => undefined);
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
    const { api, address } = this.options.engines.engineOf(copy.server);
    await removeAbandonedHelpers(api, source.id);
    await removeAbandonedHelpers(api, copy.id);
    for (const container of await listAppContainers(api, copy.id)) await removeContainer(api, container.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: copy.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await writeDockerState(this.options.db, this.options.secrets, copy.id, { volume: dataVolumeName(copy.id) });
    await ensureServiceSecrets(this.options.db, this.options.secrets, copy.id, app.secrets);
    const file = join(this.options.dataDir, 'copies', `${copy.id}.tar.zst`);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      const generation = await this.generationOf(source);
      const values = await this.valuesOf(source, publishedHost(address), source.port);
      const packed = await this.withDatabaseRunning(api, source, app, values, generation,
        () => writeAppArchive(this.dataTarget(api, source, app, values, generation), file));
      const compression = await verifyArchive(file, packed.sha256);
      await ensureNetwork(api, appNetworkName(copy.id), labelsOf({ serviceId: copy.id, serverId: copy.server.id, role: 'network' }));
      await this.ensureVolumes(api, copy, app, 0, await this.schemaOfArchive(api, app, await readAppManifest(file, compression)));
      await this.loadInto(api, copy, app, 0, { file, compression }, { neutralize: true });
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** What this slice does not do yet for an app's service: said at once, before anything is touched. */
  notSupported(service: ServiceSpec, what: 'Backups' | 'Restores' | 'Copies' | 'Redeploys'): DriverError {
    return new DriverError(`${what} of services of the app ${service.app} are not supported yet.`);
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
    const id = await this.startSupporting(api, service, app, database, existing, values, generation);
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

  private async appOf(service: ServiceSpec): Promise<AppDefinition> {
    const app = await findApp(this.options.db, service.app as string);
    if (!app) throw new DriverError(`The app ${service.app} of this service is no longer registered; the operator can add it again (admin add-app).`);
    return app;
  }

  private async ensureNetworkAndVolumes(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<void> {
    await ensureNetwork(api, appNetworkName(service.id), labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
    await this.ensureVolumes(api, service, app, generation);
  }

  private async ensureVolumes(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number, schemaOf?: string): Promise<void> {
    for (const volume of app.volumes) {
      await ensureVolume(api, appVolumeName(service.id, volume, generation), {
        ...labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }), ...(schemaOf ? { [LABEL.schemaOf]: schemaOf } : {}),
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

  /** The values `${NAME}` may name: the service's secrets (opened now) and the built-ins. */
  private async valuesOf(service: ServiceSpec, host: string, port: number | null): Promise<Record<string, string>> {
    const secrets = await readServiceSecrets(this.options.db, this.options.secrets, service.id);
    // A copy's mail goes to the mail catcher, with its own login there, and nowhere else (none while the catcher is off).
    const isCopy = service.parentId !== null;
    const relay = isCopy ? this.options.containerMailRelay() : service.outgoingSmtp;
    const login = isCopy ? (await readDockerState(this.options.db, this.options.secrets, service.id)).mail : null;
    const separator = relay?.lastIndexOf(':') ?? -1;
    const smtp = relay ? { host: relay.slice(0, separator), port: Number(relay.slice(separator + 1)), user: login?.username ?? null, password: login?.password ?? null } : null;
    return {
      ...secrets,
      TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name, TEAMINFRA_REVISION: String(service.revision),
      TEAMINFRA_PUBLIC_URL: port === null ? '' : `http://${host}:${port}`,
      TEAMINFRA_SMTP_HOST: smtp?.host ?? '', TEAMINFRA_SMTP_PORT: smtp ? String(smtp.port) : '',
      TEAMINFRA_SMTP_USER: smtp?.user ?? '', TEAMINFRA_SMTP_PASSWORD: smtp?.password ?? '', TEAMINFRA_SMTP_URI: smtpUri(smtp),
    };
  }

  private shared(service: ServiceSpec, container: AppContainer, values: Record<string, string>, generation: number, network = appNetworkName(service.id)) {
    return {
      serviceId: service.id, serverId: service.server.id, revision: service.revision, container, network, generation,
      volumeOf: (volume: string) => appVolumeName(service.id, volume, generation), env: renderEnvironment(container, values),
      limits: containerLimitsOf(service.server.docker?.limits),
    };
  }

  /** A container other than the web one (the database): running, and healthy when it has a healthcheck. */
  private async startSupporting(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    values: Record<string, string>, generation: number,
  ): Promise<string> {
    const id = existing?.id ?? await createAppContainer(api, {
      ...this.shared(service, container, values, generation), name: appContainerName(service.id, service.revision, container.name, generation),
    });
    if (!existing?.running) await startContainer(api, id);
    if (container.healthcheck) await waitEngineHealthy(api, id, container.name, app.deadlines.startMs);
    return id;
  }

  private async migrate(api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>, generation: number): Promise<void> {
    const command = app.commands.migrate!;
    const container = app.containers.find((each) => each.name === command.service)!;
    const { exitCode, output } = await runAppCommand(api, {
      ...this.shared(service, container, values, generation), command, what: `The app's migrate command`, timeoutMs: app.deadlines.migrateMs,
    });
    if (exitCode !== 0) throw new DriverError(`The app's migrate command failed (exit code ${exitCode})${output}, so the service was not started.`);
  }

  /** The web container published on the service's port (kept across starts), answering its health path. */
  private async startWeb(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    hooks: StartHooks, host: string, generation: number,
  ): Promise<RunningService> {
    const { address } = this.options.engines.engineOf(service.server);
    const { id, published } = await startPublished(api, {
      existingId: existing?.id, port: existing?.port ?? service.port, containerPort: app.web.port,
      choosePort: async () => choosePort(address, await this.options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
      create: async (port) => createAppContainer(api, {
        // Rendered with the port people will use, for links the app writes in its emails.
        ...this.shared(service, container, await this.valuesOf(service, host, port), generation),
        name: appContainerName(service.id, service.revision, container.name, generation),
        publish: { containerPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '', hostPort: port },
      }),
    });
    await hooks.spawned((await containerPid(api, id)).pid);
    try {
      const pid = await waitHealthy(api, id, { host, port: published, path: app.web.healthPath, serviceId: service.id }, app.deadlines.startMs);
      return { pid, port: published, revision: service.revision, publishedHost: host };
    } catch (error) {
      await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
      throw error;
    }
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

function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : error instanceof Error && 'reason' in error ? String(error.reason) : 'an internal error').replace(/\.$/, '');
}
