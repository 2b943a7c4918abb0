// A Docker service's data taken out as one archive (app-data.ts) and loaded into a generation of
// its volumes, for backups, restores and copies, with what makes the copy consistent: the
// database container running for the snapshot command's dump (started for it when the service
// is stopped), or, for a definition whose data is only files and that has no snapshot command,
// the service stopped while its files are read and started again after. Also the generations of
// volumes a restore makes and drops.
import type { AppDefinition } from '../apps/app-definition.js';
import type { PackedFile } from '../backup-compression.js';
import type { ServiceSpec } from '../driver.js';
import type { AppArchiveManifest } from './app-archive.js';
import { ensureNetwork, listAppContainers } from './app-containers.js';
import { appDataParts, imageIdsOf, loadAppArchive, runSnapshotForItsData, writeAppArchive, type AppDataTarget } from './app-data.js';
import { listVolumes, removeContainer, removeVolume, startContainer, stopContainer } from './containers.js';
import type { DockerApi } from './docker-api.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { publishedHost } from './engine-address.js';
import { appNetworkName, LABEL, labelsOf } from './labels.js';
import { containerSettings, currentGeneration, engineVolumeName, valuesOf } from './service-definition.js';
import { startSupporting } from './service-start.js';

/** How app-data.ts makes the service's containers: over volumes of `generation`, on `network` (the service's own unless staging). */
function dataTarget(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>, generation: number,
  network = appNetworkName(service.id),
): AppDataTarget {
  return {
    api, app, stopGraceMs: options.stopGraceMs,
    settingsOf: (name) => containerSettings(service, app, app.containers.find((each) => each.name === name)!, values, generation, network),
  };
}

/** The service's current data as one archive at `file`; `emptyData`, for a backup: the sentence it fails with when there is no file to keep. */
export async function writeServiceArchive(
  options: DockerDriverOptions, service: ServiceSpec, app: AppDefinition, file: string, { emptyData = false } = {},
): Promise<PackedFile> {
  const { api, address } = options.engines.engineOf(service.server);
  const generation = await currentGeneration(options, service);
  const values = await valuesOf(options, service, publishedHost(address), service.port);
  const target = dataTarget(options, api, service, app, values, generation);
  return withConsistentData(options, api, service, app, values, generation,
    () => writeAppArchive(target, file, emptyData ? emptyDataSentence(app) : undefined));
}

/**
 * At create, for a service of an image whose snapshot command makes its data (the bundled
 * image's makes the database its application would make): its volume holds that data before
 * the first start, as operators of such images have always found it.
 */
export async function initialiseImageData(options: DockerDriverOptions, service: ServiceSpec, app: AppDefinition): Promise<void> {
  if (!app.imageContract || !app.commands.snapshot) return;
  const { api, address } = options.engines.engineOf(service.server);
  const values = await valuesOf(options, service, publishedHost(address), service.port);
  await runSnapshotForItsData(dataTarget(options, api, service, app, values, await currentGeneration(options, service)));
}

/** What a backup that finds no file says: for an image, which label names where its data is. */
function emptyDataSentence(app: AppDefinition): string | undefined {
  // With a snapshot command, the command that wrote nothing is what the reason names (app-data.ts).
  if (!app.imageContract || app.commands.snapshot) return undefined;
  const mount = app.containers[0]?.volumes[0]?.target ?? '';
  return `The service's data directory (${mount}, where its volume is mounted) holds no file, so there is no data to back up. ` +
    `If the image keeps its data in another directory, give the image the label ${app.imageContract.dataDirLabel} naming it.`;
}

/**
 * Runs `work` while the service's data can be read consistently. With a database: while its
 * container of `generation` runs (as it is while the service serves; otherwise started for the
 * work and stopped after, also one a crashed backup or copy had left running). With files only
 * and no snapshot command: with the service's containers stopped, started again after.
 */
async function withConsistentData<T>(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>, generation: number,
  work: () => Promise<T>,
): Promise<T> {
  const { database } = appDataParts(app);
  const all = await listAppContainers(api, service.id);
  if (!database) {
    if (app.commands.snapshot) return work();
    const running = all.filter((each) => each.running);
    for (const container of running) await stopContainer(api, container.id, options.stopGraceMs);
    try {
      return await work();
    } finally {
      for (const container of running) await startContainer(api, container.id);
    }
  }
  const containers = all.filter((each) => each.appService === database.name && each.generation === generation);
  const serving = all.some((each) => each.appService === app.web.service && each.running && each.generation === generation);
  if (serving && containers.some((each) => each.running)) return work();
  const existing = containers.find((each) => each.running) ?? containers.find((each) => each.revision === service.revision);
  const id = await startSupporting(options, api, service, app, database, existing, { values, hosts: [] }, generation);
  try {
    return await work();
  } finally {
    await stopContainer(api, id, options.stopGraceMs).catch(() => undefined);
  }
}

/** Fills the (empty) volumes of `generation` from a checked archive, on a staging network of their own, so the service's database is never in the way. */
export async function loadInto(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number,
  archive: Parameters<typeof loadAppArchive>[1], loadOptions: { neutralize: boolean },
): Promise<void> {
  const { address } = options.engines.engineOf(service.server);
  const network = `${appNetworkName(service.id)}-g${generation}`;
  await ensureNetwork(api, network, labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
  try {
    const values = await valuesOf(options, service, publishedHost(address), service.port);
    await loadAppArchive(dataTarget(options, api, service, app, values, generation, network), archive, loadOptions);
  } finally {
    await api.json('DELETE', `/networks/${network}`, { accept: [404] }).catch(() => undefined);
  }
}

/**
 * The image of the migrate step whose schema an archive's data has, when every image of the
 * app is the one the backup was taken under (then the first start on it skips the migration).
 */
export async function schemaOfArchive(api: DockerApi, app: AppDefinition, manifest: AppArchiveManifest): Promise<string | undefined> {
  if (!app.commands.migrate || !manifest.images) return undefined;
  const now = await imageIdsOf(api, app);
  const same = app.containers.every((container) => now[container.name] !== '' && manifest.images?.[container.name] === now[container.name]);
  return same ? now[app.commands.migrate.service] : undefined;
}

/** The containers and volumes of one generation of the service's data, and its staging network. */
export async function dropGeneration(api: DockerApi, service: ServiceSpec, app: AppDefinition, generation: number): Promise<void> {
  for (const container of await listAppContainers(api, service.id)) {
    if (container.generation === generation) await removeContainer(api, container.id);
  }
  for (const volume of app.volumes) await removeVolume(api, engineVolumeName(app, service.id, volume, generation));
  await api.json('DELETE', `/networks/${appNetworkName(service.id)}-g${generation}`, { accept: [404] });
}

/** After a swap: the data the restore replaced (and a crash's staged generation), with the containers on it. */
export async function dropGenerationsBut(api: DockerApi, service: ServiceSpec, app: AppDefinition, keep: number): Promise<void> {
  for (const container of await listAppContainers(api, service.id)) {
    if (container.generation !== keep) await removeContainer(api, container.id);
  }
  const kept = new Set(app.volumes.map((volume) => engineVolumeName(app, service.id, volume, keep)));
  for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) {
    if (!kept.has(volume)) await removeVolume(api, volume);
  }
}
