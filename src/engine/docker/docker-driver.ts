// The Docker driver: a server is a Docker engine, an ERP service a container of its server's
// image with its data in a named volume that outlives the container. Every step can be run
// again after a crash (names are derived from the service, the revision and the volume, and a
// create that finds its container adopts it), and what runs is always read from the engine by
// our labels, never assumed. Data moves through helper containers of the same image.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import {
  DriverError, type BackupFile, type ProvisionResult, type RestoreHooks, type RunningService, type ServerSpec, type ServiceDriver, type ServiceSpec,
  type ServiceStatus, type StartHooks,
} from '../driver.js';
import { directoryTar, packArchive, stripTopDirectory, unpackedTar, verifyArchive } from './archives.js';
import { ensureBackupsVolume, localBackupFile, storeBackupOnEngine, withBackupSpoolFile } from './backup-store.js';
import {
  answersHealth, containerPid, createHelper, keepRunning, createServiceContainer, ensureVolume, listServiceContainers, listVolumes,
  removeAbandonedHelpers, removeContainer, removeVolume, runHelper, startContainer, startOnEnginePort, stopContainer, waitHealthy, type ContainerSummary,
} from './containers.js';
import { containerEnvOf } from '../erp-app/container-env.js';
import type { DockerApi } from './docker-api.js';
import { containerLimitsOf } from './container-limits.js';
import { readDockerState, writeDockerState } from './docker-state.js';
import { publishedHost } from './engine-address.js';
import type { EngineRegistry } from './engine-registry.js';
import { CONTRACT_LABELS, type ImageContract } from './erp-image-contract.js';
import { dataVolumeName, generationOf, LABEL, labelsOf } from './labels.js';
import { choosePort } from './ports.js';
import { AppServiceDriver, runsAnApp } from './app-service-driver.js';
import { removeNetworks } from './app-containers.js';
import { relayLoginOf } from '../../mail/outgoing-relay.js';
import { failLostStaging, restoreResumePoint, stagedByLabel } from './restore-resume.js';
import { staleContainer } from './stale-container.js';
import { mailRelayOf } from './mail-relay-of.js';
import type { RelayPolicy } from '../../mail/relay-address.js';
import { ensureFront, findFront, frontStatus, removeFront, stopFront, switchFront } from './service-front.js';
import { restartCountOf } from './restart-count.js';

export interface DockerDriverOptions {
  db: Kysely<Database>;
  /** Seals a copy's mail password in docker_services. */
  secrets: SecretBox;
  engines: EngineRegistry;
  /** This node's data directory: where backups are written before they go to the engine, and cached after. */
  dataDir: string;
  /** "host:port" of the mail catcher as the server's containers reach it, while it runs; else null. Rejects, saying what to set, when they cannot. */
  containerMailRelay(server: ServerSpec): Promise<string | null>;
  /** How a production service's relay is checked at each start and redeploy (src/mail/relay-address.ts). */
  outgoingRelay: RelayPolicy;
  takenPorts(): Promise<ReadonlySet<number>>;
  startTimeoutMs: number;
  stopGraceMs: number;
}

const SNAPSHOT_DIR = '/teaminfra-snapshot';
/** The longest a snapshot or verify command may run: a large database's dump takes minutes, not hours. */
const HELPER_TIMEOUT_MS = 30 * 60_000;

export class DockerDriver implements ServiceDriver {
  readonly name = 'docker';
  /** Services of a multi-container app definition (tryton); `demo` and no app take the single-container path below. */
  private readonly apps: AppServiceDriver;

  constructor(private readonly options: DockerDriverOptions) {
    this.apps = new AppServiceDriver(options);
  }

  restartCount = (service: ServiceSpec): Promise<number> => restartCountOf(this.options.engines.engineOf(service.server).api, service.id);

  async provisionServer(server: ServerSpec): Promise<{ rootDir: string }> {
    // The engine answers and has the image (the bundled one is built there if missing), or a sentence says which is wrong.
    await this.options.engines.contractOf(server);
    const { api, address } = this.options.engines.engineOf(server);
    await ensureBackupsVolume(api, server.id);
    return { rootDir: address.text };
  }

  async provision(service: ServiceSpec): Promise<ProvisionResult | void> {
    if (runsAnApp(service)) return this.apps.provision(service);
    const { api } = this.options.engines.engineOf(service.server);
    const contract = await this.options.engines.contractOf(service.server);
    const { volume } = await readDockerState(this.options.db, this.options.secrets, service.id);
    await ensureVolume(api, volume, labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }));
    await writeDockerState(this.options.db, this.options.secrets, service.id, { volume });
    // Data initialised now, so that a backup works before the first start: the snapshot command
    // of the bundled image creates the database the application would create.
    if (contract.snapshotCommand) await this.snapshotInto(api, contract, service, volume, async () => undefined);
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    if (runsAnApp(service)) return this.apps.status(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const contract = await this.options.engines.contractOf(service.server);
    const host = publishedHost(address);
    const containers = await listServiceContainers(api, service.id);
    if (await findFront(api, service.id)) return frontStatus(api, service.id, host, contract.healthPath, containers);
    // A service started before fronts existed: its container is published on the service's port itself.
    const running = containers.filter((container) => container.running).sort((a, b) => b.revision - a.revision);
    for (const container of running) {
      if (container.port !== null && await answersHealth(host, container.port, contract.healthPath, service.id)) {
        const { pid } = await containerPid(api, container.id);
        return { state: 'running', pid, port: container.port, revision: container.revision, publishedHost: host };
      }
    }
    if (running[0]) return { state: 'starting', pid: (await containerPid(api, running[0].id)).pid };
    return { state: 'stopped' };
  }

  async start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    if (runsAnApp(service)) return this.apps.start(service, hooks);
    const { api } = this.options.engines.engineOf(service.server);
    await this.retireUnfronted(api, service);
    const { volume } = await readDockerState(this.options.db, this.options.secrets, service.id);
    const containers = await listServiceContainers(api, service.id);
    const wanted = containers.find((container) => container.revision === service.revision && container.volume === volume);
    const running = await this.runningOn(service, wanted, hooks);
    // Whatever else of the service is left (an old revision, a crash's leftovers) is removed now that this one runs.
    await this.removeContainers(api, containers.filter((container) => container.id !== running.containerId));
    return running.service;
  }

  async stop(service: ServiceSpec): Promise<void> {
    if (runsAnApp(service)) return this.apps.stop(service);
    const { api } = this.options.engines.engineOf(service.server);
    // The front first: nobody is sent to a container that is going away.
    await stopFront(api, service.id, this.options.stopGraceMs);
    for (const container of await listServiceContainers(api, service.id)) {
      if (container.running) await stopContainer(api, container.id, this.options.stopGraceMs);
    }
  }

  async redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    if (runsAnApp(service)) return this.apps.redeploy(service, revision, hooks);
    const { api } = this.options.engines.engineOf(service.server);
    await this.retireUnfronted(api, service);
    const { volume } = await readDockerState(this.options.db, this.options.secrets, service.id);
    const before = await listServiceContainers(api, service.id);
    const serving = before.filter((container) => container.running && container.revision !== revision);
    const existing = before.find((container) => container.revision === revision && container.volume === volume);
    let started: { containerId: string; service: RunningService };
    try {
      // Beside the one serving, which the front keeps forwarding to until this one answers.
      started = await this.runningOn({ ...service, revision }, existing, hooks);
    } catch (error) {
      if (serving.length === 0) throw error;
      const failed = (await listServiceContainers(api, service.id)).filter((container) => container.revision === revision);
      await this.removeContainers(api, failed);
      throw new DriverError(`Revision ${revision} did not start (${reasonOf(error)}), so revision ${serving[0]?.revision} keeps serving.`,
        false, { cause: error });
    }
    await this.removeContainers(api, (await listServiceContainers(api, service.id)).filter((container) => container.id !== started.containerId));
    return started.service;
  }

  async destroy(service: ServiceSpec): Promise<void> {
    if (runsAnApp(service)) return this.apps.destroy(service);
    const { api } = this.options.engines.engineOf(service.server);
    await removeFront(api, service.id);
    await this.removeContainers(api, await listServiceContainers(api, service.id));
    await this.removeContainers(api, await listServiceContainers(api, service.id, 'helper'));
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await removeNetworks(api, service.id);
  }

  async storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    await writeDockerState(this.options.db, this.options.secrets, service.id, { mail: credentials });
  }

  async secretValuesOf(service: ServiceSpec): Promise<string[]> {
    const { mail } = await readDockerState(this.options.db, this.options.secrets, service.id);
    const own = runsAnApp(service) ? await this.apps.secretValuesOf(service) : [];
    const relay = await relayLoginOf(this.options.db, this.options.secrets, service.id);
    return [...(mail ? [mail.password] : []), ...own, ...(relay?.password ? [relay.password] : [])];
  }

  async backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    if (runsAnApp(service)) return this.apps.backup(service, destination);
    const { api } = this.options.engines.engineOf(service.server);
    const contract = await this.options.engines.contractOf(service.server);
    const { volume } = await readDockerState(this.options.db, this.options.secrets, service.id);
    // A backup resumed after a crash starts over; the helper the crashed one used goes first.
    await removeAbandonedHelpers(api, service.id);
    // Compressed as the engine sends it, then kept in the backups volume through the same helper.
    return withBackupSpoolFile(this.options.dataDir, destination, async (file) => this.snapshotInto(api, contract, service, volume, async (tar, helperId) => {
      const packed = await packArchive(tar, file);
      const enginePath = await storeBackupOnEngine(api, helperId, service.server, service.id, file, packed.sizeBytes, contract.image, this.options.dataDir);
      return { path: enginePath, sizeBytes: packed.sizeBytes, sha256: packed.sha256 };
    }, { otherMounts: [await ensureBackupsVolume(api, service.server.id)], requireData: true }));
  }

  async copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    // Before anything is made: a copy whose containers cannot reach the mail catcher is refused, saying what to set.
    await this.options.containerMailRelay(copy.server);
    if (runsAnApp(source)) return this.apps.copy(source, copy);
    const { api } = this.options.engines.engineOf(copy.server);
    const contract = await this.options.engines.contractOf(copy.server);
    const { volume: sourceVolume } = await readDockerState(this.options.db, this.options.secrets, source.id);
    const { volume } = await readDockerState(this.options.db, this.options.secrets, copy.id);
    // A resumed copy starts over on an empty volume, which the crashed attempt's helper no longer holds.
    await removeAbandonedHelpers(api, source.id);
    await removeAbandonedHelpers(api, copy.id);
    await removeVolume(api, volume);
    await ensureVolume(api, volume, labelsOf({ serviceId: copy.id, serverId: copy.server.id, role: 'data' }));
    await writeDockerState(this.options.db, this.options.secrets, copy.id, { volume });
    await this.snapshotInto(api, contract, source, sourceVolume, (tar) => this.putIntoVolume(api, contract, copy, volume, tar));
  }

  async restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    if (runsAnApp(service)) return this.apps.restore(service, backup, hooks);
    const { api } = this.options.engines.engineOf(service.server);
    const contract = await this.options.engines.contractOf(service.server);
    const { volume: current } = await readDockerState(this.options.db, this.options.secrets, service.id);
    const staged = dataVolumeName(service.id, generationOf(current) + 1);
    const point = await restoreResumePoint(api, hooks, { current, staged });
    // A restore resumed after a crash may find the service stopped by its first attempt: it ran if it ran when asked.
    const wasRunning = hooks.ranBefore || (await listServiceContainers(api, service.id)).some((container) => container.running);
    if (point === 'lost') return failLostStaging((error) => this.startAgain(service, hooks, error), wasRunning);
    if (point === 'start') {
      // Resumed after its swap: the data it replaced is the generation before, unless a start on the restored data already dropped it.
      const previous = dataVolumeName(service.id, generationOf(current) - 1);
      const kept = (await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })).includes(previous);
      return this.runOnRestored(api, service, hooks, wasRunning, { restored: current, previous: kept ? previous : null });
    }
    if (point === 'stage') {
      // 1. Everything that can be wrong with the backup is found before the service is touched.
      const local = await localBackupFile(this.options.db, this.options.dataDir, { path: backup.path, sha256: backup.sha256 });
      try {
        const compression = await verifyArchive(local.path, backup.sha256);
        // Resumed after a crash: the volume it was staging starts over, once the crashed attempt's helper has let go of it.
        await removeAbandonedHelpers(api, service.id);
        await removeVolume(api, staged);
        await ensureVolume(api, staged, { ...labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }), ...stagedByLabel(hooks) });
        await this.putIntoVolume(api, contract, service, staged, unpackedTar(local.path, compression));
        await this.verifyVolume(api, contract, service, staged);
      } catch (error) {
        // Nothing was touched; a half-written volume is not kept beside the service's data.
        await removeVolume(api, staged).catch(() => undefined);
        throw error;
      } finally {
        // Staged: this node's copy of the backup has served (the engine keeps the backup).
        local.release(true);
      }
    }
    // 2. Stopped, and the safety backup of exactly the data being replaced.
    if (wasRunning) await this.stop(service);
    try {
      await hooks.beforeSwap({ hasData: true });
    } catch (error) {
      if (wasRunning) await this.startAgain(service, hooks, error);
      throw error;
    }
    // 3. The swap: one row names the new volume.
    await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: staged });
    return this.runOnRestored(api, service, hooks, wasRunning, { restored: staged, previous: current });
  }

  /** 4. After the swap: running again on the restored data if it ran, or back on the previous data (when still there) if that fails. */
  private async runOnRestored(
    api: DockerApi, service: ServiceSpec, hooks: StartHooks, wasRunning: boolean, volumes: { restored: string; previous: string | null },
  ): Promise<RunningService | null> {
    if (!wasRunning) {
      await this.dropOtherVolumes(api, service, volumes.restored);
      return null;
    }
    try {
      const running = await this.start(service, hooks);
      await this.dropOtherVolumes(api, service, volumes.restored);
      return running;
    } catch (error) {
      if (volumes.previous === null) throw error;
      await writeDockerState(this.options.db, this.options.secrets, service.id, { volume: volumes.previous });
      await this.startAgain(service, hooks, error);
      throw new DriverError(`The service did not start on the restored data (${reasonOf(error)}), so its previous data was put back ` +
        'and it was started again. Nothing was restored.', false, { cause: error });
    }
  }

  /**
   * A container of `service` (its revision, its volume) running, healthy, and the one its front
   * forwards to; `existing` reused when it is there. The front (made on the service's port when
   * missing) keeps forwarding to the revision before until this one answers.
   */
  private async runningOn(
    service: ServiceSpec, existing: ContainerSummary | undefined, hooks: StartHooks,
  ): Promise<{ containerId: string; service: RunningService }> {
    const { api, address } = this.options.engines.engineOf(service.server);
    const contract = await this.options.engines.contractOf(service.server);
    const host = publishedHost(address);
    const bindAddress = address.kind === 'unix' ? '127.0.0.1' : '';
    const front = await ensureFront(api, {
      serviceId: service.id, serverId: service.server.id, image: await this.options.engines.frontImageOf(service.server),
      port: service.port, targetPort: contract.port, bindAddress,
      choosePort: async () => choosePort(address, await this.options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
    });
    const target = (port: number) => ({ host, port, path: contract.healthPath, serviceId: service.id });
    let containerId: string | undefined;
    let pid: number | null = null;
    if (existing?.running && existing.port !== null) {
      pid = await waitHealthy(api, existing.id, target(existing.port), this.options.startTimeoutMs).catch(() => null);
      if (pid !== null) containerId = existing.id;
      else await removeContainer(api, existing.id);
      existing = undefined;
    }
    if (containerId === undefined) {
      const { volume } = await readDockerState(this.options.db, this.options.secrets, service.id);
      await ensureVolume(api, volume, labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }));
      const smtp = await mailRelayOf(this.options, service);
      const env = containerEnvOf({
        serviceId: service.id, name: service.name, revision: service.revision, publicUrl: `http://${host}:${front.port}`, smtp,
      });
      // A stopped container made with another relay (or relay address), catcher address or limits
      // than the service has now is made again, from the image it was made from.
      const limits = containerLimitsOf(service.server.docker?.limits);
      const extraHosts = smtp?.pinnedHosts ?? [];
      let image = contract.image;
      const stale = existing && await staleContainer(api, existing.id, { env, limits, extraHosts });
      if (existing && stale) {
        await removeContainer(api, existing.id);
        existing = undefined;
        image = stale.image;
      }
      const id = existing?.id ?? await createServiceContainer(api, {
        serviceId: service.id, serverId: service.server.id, revision: service.revision, volume, contract: { ...contract, image },
        bindAddress, port: null, limits, env, extraHosts,
      });
      const published = await startOnEnginePort(api, id, contract.port);
      await hooks.spawned((await containerPid(api, id)).pid);
      try {
        pid = await waitHealthy(api, id, target(published), this.options.startTimeoutMs);
      } catch (error) {
        await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
        throw error;
      }
      containerId = id;
    }
    await switchFront(api, service.id, containerId, this.options.stopGraceMs);
    await waitHealthy(api, front.id, target(front.port), this.options.startTimeoutMs);
    await keepRunning(api, containerId);
    return { containerId, service: { pid: pid as number, port: front.port, revision: service.revision, publishedHost: host } };
  }

  /**
   * A service last started before fronts existed has its container published on the service's
   * port itself, which the front needs: that container goes now (the one time the service does
   * not answer while it is started again), and the next start runs behind a front.
   */
  private async retireUnfronted(api: DockerApi, service: ServiceSpec): Promise<void> {
    if (await findFront(api, service.id)) return;
    await this.removeContainers(api, await listServiceContainers(api, service.id));
  }

  /**
   * One consistent copy of the service's data as a tar (entries relative to the data directory),
   * handed to `consume`. With a snapshot command: run in a helper on the same volume while the
   * service keeps running. Without: the service is stopped while its files are read, then started
   * again. `requireData` (a backup): a copy that holds no file fails, saying why, instead of
   * becoming a backup that restores nothing.
   */
  private async snapshotInto<T>(
    api: DockerApi, contract: ImageContract, service: ServiceSpec, volume: string, consume: (tar: Readable, helperId: string) => Promise<T>,
    options: { otherMounts?: { volume: string; at: string }[]; requireData?: boolean } = {},
  ): Promise<T> {
    // A service made by the operator's create-service has no volume until its first operation.
    await ensureVolume(api, volume, labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }));
    const mounts = [{ volume, at: contract.dataDir }, ...(options.otherMounts ?? [])];
    const read = async (helperId: string, path: string, empty: string): Promise<T> => {
      let found = true;
      const tar = stripTopDirectory(await api.stream('GET', `/containers/${helperId}/archive`, { query: { path } }), (files) => {
        found = files > 0 || !options.requireData;
        return found ? undefined : new DriverError(empty);
      });
      try {
        return await consume(tar, helperId);
      } catch (error) {
        if (!found) throw new DriverError(empty, false, { cause: error });
        throw error;
      }
    };
    if (contract.snapshotCommand) {
      const helper = await createHelper(api, {
        image: contract.image, serviceId: service.id, serverId: service.server.id, mounts,
        command: [...contract.snapshotCommand, contract.dataDir, SNAPSHOT_DIR],
      });
      try {
        // Made before the command runs, writable by whichever user the image runs as (most ERP images are not root).
        await api.upload('PUT', `/containers/${helper.id}/archive`, directoryTar(SNAPSHOT_DIR.slice(1), 0o1777), 'application/x-tar', { query: { path: '/' } });
        const { exitCode, output } = await runHelper(api, helper.id, HELPER_TIMEOUT_MS, "The image's snapshot command");
        if (exitCode !== 0) throw new DriverError(`The image's snapshot command failed (exit code ${exitCode})${output}.`);
        return await read(helper.id, SNAPSHOT_DIR, `The image's snapshot command exited 0 but wrote no file to ${SNAPSHOT_DIR}, so there is no data to back up.`);
      } finally {
        await helper.remove();
      }
    }
    const running = (await listServiceContainers(api, service.id)).filter((container) => container.running);
    for (const container of running) await stopContainer(api, container.id, this.options.stopGraceMs);
    const helper = await createHelper(api, { image: contract.image, serviceId: service.id, serverId: service.server.id, mounts });
    try {
      return await read(helper.id, contract.dataDir, `The service's data directory (${contract.dataDir}, where its volume is mounted) holds no file, ` +
        'so there is no data to back up. If the image keeps its data in another directory, give the image the label ' +
        `${CONTRACT_LABELS.dataDir} naming it.`);
    } finally {
      await helper.remove();
      for (const container of running) await startContainer(api, container.id);
    }
  }

  private async putIntoVolume(api: DockerApi, contract: ImageContract, service: ServiceSpec, volume: string, tar: Readable): Promise<void> {
    const helper = await createHelper(api, { image: contract.image, serviceId: service.id, serverId: service.server.id, mounts: [{ volume, at: contract.dataDir }] });
    try {
      await api.upload('PUT', `/containers/${helper.id}/archive`, tar, 'application/x-tar', { query: { path: contract.dataDir } });
    } catch (error) {
      tar.destroy();
      throw new DriverError(`The data could not be written to volume ${volume} (${(error as Error).message}).`, false, { cause: error });
    } finally {
      await helper.remove();
    }
  }

  private async verifyVolume(api: DockerApi, contract: ImageContract, service: ServiceSpec, volume: string): Promise<void> {
    if (!contract.verifyCommand) return;
    const helper = await createHelper(api, {
      image: contract.image, serviceId: service.id, serverId: service.server.id, mounts: [{ volume, at: contract.dataDir }],
      command: [...contract.verifyCommand, contract.dataDir],
    });
    try {
      const { exitCode, output } = await runHelper(api, helper.id, HELPER_TIMEOUT_MS, "The image's verify command");
      if (exitCode !== 0) {
        await removeVolume(api, volume);
        throw new DriverError(`The backup's data failed the image's check (exit code ${exitCode})${output}, so nothing was changed.`);
      }
    } finally {
      await helper.remove();
    }
  }

  private async startAgain(service: ServiceSpec, hooks: StartHooks, failure: unknown): Promise<void> {
    try {
      await this.start(service, hooks);
    } catch (startError) {
      throw new DriverError(`${reasonOf(failure)}. Starting the service again on its own data failed too: ${reasonOf(startError)}`, false, { cause: startError });
    }
  }

  private async removeContainers(api: DockerApi, containers: ContainerSummary[]): Promise<void> {
    for (const container of containers) await removeContainer(api, container.id);
  }

  /** After a swap: the service's other data volumes (the replaced one, a crash's staged one) and the containers on them. */
  private async dropOtherVolumes(api: DockerApi, service: ServiceSpec, keep: string): Promise<void> {
    const stale = (await listServiceContainers(api, service.id)).filter((container) => container.volume !== keep);
    await this.removeContainers(api, stale);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) {
      if (volume !== keep) await removeVolume(api, volume);
    }
  }
}

function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : error instanceof Error && 'reason' in error ? String(error.reason) : 'an internal error').replace(/\.$/, '');
}

