// The data of an app's service moved in and out of the engine, for backups, restores and copies.
// Out: the definition's snapshot command (pg_dump) runs as a one-off container of the database
// service on the service's own network, where it reaches the database, while the service keeps
// running; its verify command checks the dump; the app's other volumes are read as files; all
// of it becomes one archive (app-archive.ts). In: into volumes of a new generation that nothing
// runs on yet, through a staged database container (the database service's own image, started
// on those volumes on a staging network of its own, where it answers to the database's Compose
// name), so that the definition's own verify and restore commands run unchanged against it, and
// a copy's neutralize command after them. Nothing here touches the service's current volumes.
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract as tarExtract } from 'tar-stream';
import type { AppCommand, AppContainer, AppDefinition, CommandName } from '../apps/app-definition.js';
import type { BackupCompression } from '../backup-files.js';
import type { PackedFile } from '../backup-compression.js';
import { DriverError } from '../driver.js';
import {
  appArchiveTar, archivePart, DATABASE_PART, volumePart, type AppArchiveManifest, type ArchivePart,
} from './app-archive.js';
import { createAppContainer, runAppCommand, waitEngineHealthy, type NewAppContainer } from './app-containers.js';
import { directoryTar, packArchive, unpackedTar } from './archives.js';
import { createHelper, removeContainer, startContainer, stopContainer } from './containers.js';
import type { DockerApi } from './docker-api.js';

/** Where the backup commands run and keep their files (their working directory). */
const WORK_DIR = '/teaminfra-backup';
/** The longest a snapshot, verify, restore or neutralize command may run: a large database's takes minutes, not hours. */
export const APP_COMMAND_TIMEOUT_MS = 30 * 60_000;

/** A service's containers as the data steps make them: one definition container's settings, on a network, over one generation of volumes. */
export type ContainerSettings = Pick<NewAppContainer, 'serviceId' | 'serverId' | 'revision' | 'container' | 'network' | 'volumeOf' | 'env' | 'limits' | 'generation'>;

export interface AppDataTarget {
  api: DockerApi;
  app: AppDefinition;
  /** The settings of the app's container `name`. */
  settingsOf(name: string): ContainerSettings;
  stopGraceMs: number;
}

/**
 * The parts of an app's data: the database's volumes (dumped by the snapshot command) and the
 * others (kept as files). Without a database, a snapshot command writes the files of the one
 * volume its service mounts (an image contract's: SQLite's online backup of /data), which
 * stand for that volume's part: `snapshotVolume`.
 */
export function appDataParts(app: AppDefinition): {
  database: AppContainer | null; manifest: AppArchiveManifest; fileVolumes: { volume: string; container: AppContainer; target: string }[];
  snapshotVolume: string | null;
} {
  const database = app.database && app.commands.snapshot ? app.containers.find((each) => each.name === app.database!.service) ?? null : null;
  const snapshotService = !app.database && app.commands.snapshot ? app.containers.find((each) => each.name === app.commands.snapshot!.service) : undefined;
  const snapshotVolume = snapshotService?.volumes.length === 1 ? snapshotService.volumes[0]!.volume : null;
  const databaseVolumes = database ? database.volumes.map((mount) => mount.volume) : [];
  const fileVolumes = app.volumes.filter((volume) => !databaseVolumes.includes(volume)).map((volume) => {
    const container = app.containers.find((each) => each.volumes.some((mount) => mount.volume === volume))!;
    // Read and written where the app mounts it, so that its top directory keeps the app's owner.
    return { volume, container, target: container.volumes.find((mount) => mount.volume === volume)!.target.replace(/\/+$/, '') };
  });
  return {
    database, fileVolumes, snapshotVolume, manifest: { format: 1, app: app.name, databaseVolumes, fileVolumes: fileVolumes.map((each) => each.volume) },
  };
}

/** The engine's id of each container's image, by container name: what the data's schema was made by. */
export async function imageIdsOf(api: DockerApi, app: AppDefinition): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const container of app.containers) {
    const image = await api.json<{ Id: string } | undefined>('GET', `/images/${encodeURIComponent(container.image)}/json`, { accept: [404] });
    ids[container.name] = image?.Id ?? '';
  }
  return ids;
}

/** Said before anything is touched, for a definition that cannot give a consistent copy of its data. */
export function refuseWithoutSnapshot(app: AppDefinition, what: string): void {
  const volumesOfDatabase = app.database ? app.containers.find((each) => each.name === app.database!.service)?.volumes.length ?? 0 : 0;
  if (volumesOfDatabase > 0 && !(app.commands.snapshot && app.commands.restore)) {
    throw new DriverError(`${what} of services of the app ${app.name} need the definition's snapshot and restore commands ` +
      '(x-teaminfra.commands), which it does not have; the operator adds them (admin add-app).');
  }
}

/**
 * Writes the service's data as one archive at `destination` (atomically, compressed and
 * checksummed). The database container must be running, or the service stopped when its files
 * are read as they lie (the caller sees to it). `emptyData`: the sentence a backup that holds
 * no file at all fails with, for a service whose data is only files.
 */
export async function writeAppArchive(target: AppDataTarget, destination: string, emptyData?: string): Promise<PackedFile> {
  const { api } = target;
  const { database, fileVolumes, manifest, snapshotVolume } = appDataParts(target.app);
  const dumped = `${destination}.database.tar`;
  const helpers: { remove(): Promise<void> }[] = [];
  let files = 0;
  try {
    const parts: ArchivePart[] = [];
    if (database) {
      await snapshotDatabase(target, dumped);
      parts.push({ prefix: DATABASE_PART, open: async () => createReadStream(dumped) });
    }
    for (const { volume, container, target: at } of fileVolumes) {
      // An image contract's one volume is the whole archive, its files at the top (app-archive.ts).
      const prefix = target.app.imageContract ? '' : volumePart(volume);
      if (volume === snapshotVolume) {
        await runSnapshot(target, dumped);
        parts.push({ prefix, open: async () => createReadStream(dumped), withoutTop: true });
        continue;
      }
      const settings = target.settingsOf(container.name);
      const helper = await createHelper(api, {
        image: container.image, serviceId: settings.serviceId, serverId: settings.serverId, mounts: [{ volume: settings.volumeOf(volume), at }],
      });
      helpers.push(helper);
      parts.push({ prefix, open: () => api.stream('GET', `/containers/${helper.id}/archive`, { query: { path: at } }), withoutTop: prefix === '' });
    }
    const images = await imageIdsOf(api, target.app);
    const packed = await packArchive(appArchiveTar(target.app.imageContract ? null : { ...manifest, images }, parts, () => { files += 1; }), destination);
    if (emptyData && files === 0) throw new DriverError(emptyData);
    return packed;
  } catch (error) {
    if (emptyData && files === 0) throw new DriverError(emptyData, false, { cause: error });
    throw error;
  } finally {
    for (const helper of helpers) await helper.remove().catch(() => undefined);
    rmSync(dumped, { force: true });
  }
}

/** The snapshot command's files as a tar at `file` (entries under its working directory), checked by the verify command. */
async function snapshotDatabase(target: AppDataTarget, file: string): Promise<void> {
  const { api, app } = target;
  await runSnapshot(target, file);
  if (app.commands.verify) {
    await runCommand(target, 'verify', { path: WORK_DIR, prepare: (id) => api.upload('PUT', `/containers/${id}/archive`, createReadStream(file), 'application/x-tar', { query: { path: '/' } }) });
  }
}

/**
 * The snapshot command run once for nothing but its effect on the data: an image contract's
 * makes the database its application would make on a first start (the bundled image's does),
 * so that a created service has its data before it ever runs.
 */
export async function runSnapshotForItsData(target: AppDataTarget): Promise<void> {
  const { api } = target;
  await runCommand(target, 'snapshot', {
    path: WORK_DIR,
    prepare: (id) => api.upload('PUT', `/containers/${id}/archive`, directoryTar(WORK_DIR.slice(1), 0o1777), 'application/x-tar', { query: { path: '/' } }),
  });
}

/** The snapshot command's files as a tar at `file`, entries under its working directory; a command that wrote none fails. */
async function runSnapshot(target: AppDataTarget, file: string): Promise<void> {
  const { api, app } = target;
  let files = 0;
  await runCommand(target, 'snapshot', {
    path: WORK_DIR,
    // Made before the command runs, writable by whichever user it runs as (postgres is not root).
    prepare: (id) => api.upload('PUT', `/containers/${id}/archive`, directoryTar(WORK_DIR.slice(1), 0o1777), 'application/x-tar', { query: { path: '/' } }),
    collect: async (id) => {
      const tar = await api.stream('GET', `/containers/${id}/archive`, { query: { path: WORK_DIR } });
      await pipeline(tar, createWriteStream(file, { mode: 0o600 }));
      files = await countFiles(createReadStream(file));
    },
  });
  if (files === 0) {
    throw new DriverError(`${whatOf(app, 'snapshot')} exited 0 but wrote no file to its working directory (${WORK_DIR}), so there is no data to back up.`);
  }
}

/**
 * Fills the volumes `target.settingsOf` names (a generation nothing runs on, made empty by the
 * caller) from an archive verifyArchive and readAppManifest checked: each file volume from its
 * part, the database by starting a staged database container on them and running the
 * definition's verify and restore commands against it (then `neutralize`, for a copy). The
 * staged container is stopped cleanly (its data written) and removed, whatever happens.
 */
export async function loadAppArchive(
  target: AppDataTarget, archive: { file: string; compression: BackupCompression; filesAtTop?: boolean }, options: { neutralize: boolean },
): Promise<void> {
  const { api, app } = target;
  const { database, fileVolumes } = appDataParts(app);
  for (const { volume, container, target: at } of fileVolumes) {
    const settings = target.settingsOf(container.name);
    const helper = await createHelper(api, {
      image: container.image, serviceId: settings.serviceId, serverId: settings.serverId, mounts: [{ volume: settings.volumeOf(volume), at }],
    });
    // Its top directory too (the volume itself), with the owner it had; an archive from before
    // manifests holds the one volume's files at its top.
    const tar = archivePart(unpackedTar(archive.file, archive.compression), archive.filesAtTop ? '' : volumePart(volume), `${at.slice(1)}/`);
    try {
      await api.upload('PUT', `/containers/${helper.id}/archive`, tar, 'application/x-tar', { query: { path: '/' } });
    } catch (error) {
      tar.destroy();
      throw new DriverError(`The files of the volume ${volume} could not be written (${(error as Error).message}).`, false, { cause: error });
    } finally {
      await helper.remove();
    }
  }
  if (!database) {
    // Files only (an image contract's data): the verify command checks them where they were written.
    if (app.commands.verify) await runCommand(target, 'verify');
    if (options.neutralize && app.commands.neutralize) await runCommand(target, 'neutralize');
    return;
  }
  const settings = target.settingsOf(database.name);
  const staged = await createAppContainer(api, {
    ...settings, oneOff: true, name: `teaminfra-${settings.serviceId}-g${settings.generation ?? 0}-staged-${database.name}`,
  });
  try {
    await startContainer(api, staged);
    await waitEngineHealthy(api, staged, `staged ${database.name}`, app.deadlines.startMs);
    const dump = {
      path: WORK_DIR,
      prepare: (id: string) => api.upload('PUT', `/containers/${id}/archive`,
        archivePart(unpackedTar(archive.file, archive.compression), DATABASE_PART, `${WORK_DIR.slice(1)}/`), 'application/x-tar', { query: { path: '/' } }),
    };
    if (app.commands.verify) await runCommand(target, 'verify', dump);
    await runCommand(target, 'restore', dump);
    if (options.neutralize && app.commands.neutralize) await runCommand(target, 'neutralize');
    // Stopped with its grace, so that the database is written whole before the volume is used.
    await stopContainer(api, staged, target.stopGraceMs);
  } finally {
    await removeContainer(api, staged);
  }
}

/** How a reason names the definition's command: the image's, for one its contract labels gave. */
function whatOf(app: AppDefinition, name: CommandName): string {
  return `The ${app.imageContract ? 'image' : 'app'}'s ${name} command`;
}

/** The definition's command `name` as a one-off container of the service it names (its image, environment, volumes, network). */
async function runCommand(target: AppDataTarget, name: CommandName, workDir?: Parameters<typeof runAppCommand>[1]['workDir']): Promise<void> {
  const command = target.app.commands[name] as AppCommand;
  const { exitCode, output } = await runAppCommand(target.api, {
    ...target.settingsOf(command.service), command, what: whatOf(target.app, name), timeoutMs: APP_COMMAND_TIMEOUT_MS, ...(workDir ? { workDir } : {}),
  });
  if (exitCode !== 0) throw new DriverError(`${whatOf(target.app, name)} failed (exit code ${exitCode})${output}.`);
}

async function countFiles(tar: Readable): Promise<number> {
  const reader = tarExtract();
  let files = 0;
  reader.on('entry', (header, stream, next) => {
    if (header.type === 'file') files += 1;
    stream.on('end', next);
    stream.resume();
  });
  await pipeline(tar, reader as unknown as NodeJS.WritableStream);
  return files;
}
