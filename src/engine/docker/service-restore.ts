// A Docker service's restore. The backup is checked whole (checksum, archive, manifest), then
// loaded into the next generation of the service's volumes through a staged database, where the
// definition's verify and restore commands run; only then is the service stopped, the safety
// backup taken and the generation swapped in one row (docker_services.volume). A failure before
// the swap leaves the service as it was; a start that fails after it puts the previous
// generation back and starts on it. A restore resumed after a crash picks up where the labels
// of its staged volumes say it was (restore-resume.ts).
import type { AppDefinition } from '../apps/app-definition.js';
import { DriverError, type RestoreHooks, type RunningService, type ServiceSpec, type StartHooks } from '../driver.js';
import { readAppManifest, type AppArchiveManifest } from './app-archive.js';
import { listAppContainers } from './app-containers.js';
import { appDataParts, refuseWithoutSnapshot } from './app-data.js';
import { verifyArchive } from './archives.js';
import { localBackupFile } from './backup-store.js';
import { listVolumes, removeAbandonedHelpers } from './containers.js';
import type { DockerApi } from './docker-api.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { writeDockerState } from './docker-state.js';
import { dataVolumeName, LABEL } from './labels.js';
import { failLostStaging, restoreResumePoint, stagedByLabel } from './restore-resume.js';
import { currentGeneration, definitionOf, engineVolumeName, ensureVolumes } from './service-definition.js';
import { dropGeneration, dropGenerationsBut, loadInto, schemaOfArchive } from './service-data.js';
import { ensureServiceImages } from './service-images.js';
import { reasonOf } from './service-start.js';

/** What a restore does to the service as a whole: the driver's own start and stop. */
export interface RunsService {
  start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService>;
  stop(service: ServiceSpec): Promise<void>;
}

export async function restoreService(
  options: DockerDriverOptions, runs: RunsService, service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks,
): Promise<RunningService | null> {
  const app = await definitionOf(options, service);
  refuseWithoutSnapshot(app, 'Restores');
  await ensureServiceImages(options, service, app);
  const { api } = options.engines.engineOf(service.server);
  const current = await currentGeneration(options, service);
  const staged = current + 1;
  const [first] = app.volumes;
  const point = first === undefined ? 'stage' : await restoreResumePoint(api, hooks, {
    current: engineVolumeName(app, service.id, first, current), staged: engineVolumeName(app, service.id, first, staged),
  });
  // Whether it serves (its web container), not whether a container runs: a crashed attempt's
  // safety backup may have left the database of a stopped service running.
  const wasRunning = hooks.ranBefore
    || (await listAppContainers(api, service.id)).some((container) => container.running && container.appService === app.web.service);
  const startAgain = (failure: unknown) => startAgainAfter(runs, service, hooks, failure);
  if (point === 'lost') return failLostStaging(startAgain, wasRunning);
  // Resumed after its swap: the data it replaced is the generation before, unless a start on the restored data already dropped it.
  if (point === 'start') {
    const kept = first !== undefined && (await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' }))
      .includes(engineVolumeName(app, service.id, first, current - 1));
    return runOnRestored(options, runs, api, service, app, hooks, wasRunning, { restored: current, previous: kept ? current - 1 : null });
  }
  if (point === 'stage') await stage(options, api, service, app, backup, staged, hooks);
  await runs.stop(service);
  try {
    await hooks.beforeSwap({ hasData: true });
  } catch (error) {
    await dropGeneration(api, service, app, staged).catch(() => undefined);
    if (wasRunning) await startAgain(error);
    throw error;
  }
  await writeDockerState(options.db, options.secrets, service.id, { volume: dataVolumeName(service.id, staged) });
  return runOnRestored(options, runs, api, service, app, hooks, wasRunning, { restored: staged, previous: current });
}

/** The backup checked whole and loaded into the volumes of `generation` (labelled as this restore's), or nothing changed. */
async function stage(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, backup: { path: string; sha256: string },
  generation: number, hooks: RestoreHooks,
): Promise<void> {
  const local = await localBackupFile(options.db, options.dataDir, backup);
  try {
    const compression = await verifyArchive(local.path, backup.sha256);
    const manifest = await readAppManifest(local.path, compression, app.imageContract ? appDataParts(app).manifest : undefined);
    refuseOtherApp(manifest, app);
    // Resumed after a crash: the generation it was staging starts over, once the crashed attempt's containers have let go of it.
    await removeAbandonedHelpers(api, service.id);
    await dropGeneration(api, service, app, generation);
    await ensureVolumes(api, service, app, generation, await schemaOfArchive(api, app, manifest), stagedByLabel(hooks));
    try {
      await loadInto(options, api, service, app, generation, { file: local.path, compression, filesAtTop: manifest.filesAtTop ?? false }, { neutralize: false });
    } catch (error) {
      await dropGeneration(api, service, app, generation).catch(() => undefined);
      throw new DriverError(`The backup could not be restored (${reasonOf(error)}), so nothing was changed.`, false, { cause: error });
    }
  } finally {
    // This node's copy of the backup has served (the engine keeps the backup).
    local.release(true);
  }
}

/** After the swap: running again on the restored generation if it ran, or back on the previous one (when still there) if that fails. */
async function runOnRestored(
  options: DockerDriverOptions, runs: RunsService, api: DockerApi, service: ServiceSpec, app: AppDefinition, hooks: StartHooks, wasRunning: boolean,
  generations: { restored: number; previous: number | null },
): Promise<RunningService | null> {
  if (!wasRunning) {
    await dropGenerationsBut(api, service, app, generations.restored);
    return null;
  }
  try {
    const running = await runs.start(service, hooks);
    await dropGenerationsBut(api, service, app, generations.restored);
    return running;
  } catch (error) {
    if (generations.previous === null) throw error;
    await writeDockerState(options.db, options.secrets, service.id, { volume: dataVolumeName(service.id, generations.previous) });
    await startAgainAfter(runs, service, hooks, error);
    await dropGeneration(api, service, app, generations.restored).catch(() => undefined);
    throw new DriverError(`The service did not start on the restored data (${reasonOf(error)}), so its previous data was put back ` +
      'and it was started again. Nothing was restored.', false, { cause: error });
  }
}

/** Starts the service again on its own data after `failure`, which the error keeps when that start fails too. */
export async function startAgainAfter(runs: RunsService, service: ServiceSpec, hooks: StartHooks, failure: unknown): Promise<void> {
  try {
    await runs.start(service, hooks);
  } catch (startError) {
    throw new DriverError(`${reasonOf(failure)}. Starting the service again on its own data failed too: ${reasonOf(startError)}`, false, { cause: startError });
  }
}

/** A backup of another app (or of another shape of this one) is refused before anything is touched. */
function refuseOtherApp(manifest: AppArchiveManifest, app: AppDefinition): void {
  const { manifest: expected } = appDataParts(app);
  // An image's backups name what the service ran (its app, or `image`); the shape of the data is what counts.
  if (manifest.app !== app.name && !app.imageContract) {
    throw new DriverError(`The backup was taken of a service of the app ${manifest.app}, not ${app.name}, so it cannot be restored into this service.`);
  }
  if (JSON.stringify([...manifest.fileVolumes].sort()) !== JSON.stringify([...expected.fileVolumes].sort())
    || JSON.stringify([...manifest.databaseVolumes].sort()) !== JSON.stringify([...expected.databaseVolumes].sort())) {
    throw new DriverError(`The backup holds the volumes ${[...manifest.databaseVolumes, ...manifest.fileVolumes].join(', ')}, but the app ${app.name} ` +
      `now has ${[...expected.databaseVolumes, ...expected.fileVolumes].join(', ')}, so it cannot be restored into this service.`);
  }
}
