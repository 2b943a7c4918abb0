// Backups of Docker services are kept on their server's engine, in its backups volume, so that
// any control-plane node can serve or restore them (several nodes share one PostgreSQL, not a
// disk). A backup's path is then docker://SERVER/SERVICE/FILE?image=IMAGE; a node that needs
// the bytes fetches them through the engine's API, checked against the backup's SHA-256, into
// its own bounded cache (backup-cache.ts).
import { basename } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { DriverError, type ServerSpec } from '../driver.js';
import { sha256OfFile } from '../local/backup-archive.js';
import { backupCacheOf, type HeldBackupFile } from './backup-cache.js';
import { extractSingleFile, singleFileTar } from './archives.js';
import { createHelper, ensureVolume, runHelper } from './containers.js';
import { DockerApi, DockerError } from './docker-api.js';
import { parseEngineAddress } from './engine-address.js';
import { ENGINE_BACKUP_SCHEME, engineBackupLocation, isEngineBackupPath } from './engine-backup-path.js';
import { contractOf } from './erp-image-contract.js';
import { backupsVolumeName, labelsOf } from './labels.js';

const MOUNT = '/teaminfra-backups';
const SCHEME = ENGINE_BACKUP_SCHEME;

export { isEngineBackupPath };

/** The server's backups volume, as a helper mounts it to put a backup in or take one out. */
export function backupsMount(serverId: string): { volume: string; at: string } {
  return { volume: backupsVolumeName(serverId), at: MOUNT };
}

/**
 * backupsMount, once the volume exists with our labels. Asked before every helper that mounts
 * it: a volume someone removed would otherwise be made again by the engine, unlabelled, by the
 * mount itself, and then be neither ours to list nor to clean up.
 */
export async function ensureBackupsVolume(api: DockerApi, serverId: string): Promise<{ volume: string; at: string }> {
  await ensureVolume(api, backupsVolumeName(serverId), labelsOf({ serverId, role: 'backups' }));
  return backupsMount(serverId);
}

/**
 * Runs `write` with the file a Docker backup is written to before it goes to the engine: in
 * this node's spool, named as the engine will keep it, and removed after unless
 * storeBackupOnEngine made it the node's copy.
 */
export async function withBackupSpoolFile<T>(dataDir: string, destination: string, write: (file: string) => Promise<T>): Promise<T> {
  const cache = backupCacheOf(dataDir);
  const file = cache.spoolPathOf(`${basename(destination).replace(/\.sqlite\.zst$/, '')}.tar.zst`);
  try {
    return await write(file);
  } finally {
    cache.dropSpooled(file);
  }
}

/**
 * Puts `file` into the server's backups volume through `helperId`, a helper container that
 * mounts it (ensureBackupsVolume), then keeps it as this node's copy if the cache has room;
 * returns the backup's path.
 */
export async function storeBackupOnEngine(
  api: DockerApi, helperId: string, server: ServerSpec, serviceId: string, file: string, sizeBytes: number, image: string, dataDir: string,
): Promise<string> {
  const name = `${serviceId}/${basename(file)}`;
  await api.upload('PUT', `/containers/${helperId}/archive`, singleFileTar(name, file, sizeBytes), 'application/x-tar', { query: { path: MOUNT } });
  backupCacheOf(dataDir).keep(file, name).release();
  return `${SCHEME}//${server.id}/${name}?image=${encodeURIComponent(image)}`;
}

/** Where a backup kept on an engine is: its server, its file in the backups volume (SERVICE/FILE), the image that put it there. */
// A helper's command line holds the files it removes: a bounded number per helper.
const FILES_PER_HELPER = 200;

/**
 * Removes backup files kept on engines (their rows are gone already: backup-retention.ts), with
 * the image's remove command (`rm -f --` unless the image names another) in a helper container
 * per server, image and service, as the files' own image put them there. A server that is no
 * longer a Docker server keeps its files: there is no engine to ask.
 */
export async function removeEngineBackupFiles(db: Kysely<Database>, paths: readonly string[]): Promise<void> {
  const groups = new Map<string, { serverId: string; image: string; serviceId: string; names: string[] }>();
  for (const path of paths.filter(isEngineBackupPath)) {
    const { serverId, name, image } = engineBackupLocation(path);
    const serviceId = name.split('/')[0] ?? '';
    const key = JSON.stringify([serverId, image, serviceId]);
    const group = groups.get(key) ?? { serverId, image, serviceId, names: [] };
    group.names.push(name);
    groups.set(key, group);
  }
  const failures: string[] = [];
  for (const group of groups.values()) {
    const server = await db.selectFrom('docker_servers').select(['docker_host']).where('server_id', '=', group.serverId).executeTakeFirst();
    if (!server) continue;
    const api = new DockerApi(parseEngineAddress(server.docker_host));
    try {
      const inspected = await api.json<{ Config: { Labels: Record<string, string> | null } } | undefined>(
        'GET', `/images/${encodeURIComponent(group.image)}/json`, { accept: [404] });
      const contract = contractOf(group.image, inspected?.Config.Labels);
      for (let first = 0; first < group.names.length; first += FILES_PER_HELPER) {
        const names = group.names.slice(first, first + FILES_PER_HELPER);
        const helper = await createHelper(api, {
          image: group.image, serviceId: group.serviceId, serverId: group.serverId, mounts: [await ensureBackupsVolume(api, group.serverId)],
          command: [...contract.removeCommand, ...names.map((name) => `${MOUNT}/${name}`)],
          // The files were put there by the engine as root; an image that runs as its own user could not remove them.
          asRoot: true,
        });
        try {
          const { exitCode, output } = await runHelper(api, helper.id, 60_000, "The image's remove command");
          if (exitCode !== 0) failures.push(`server ${group.serverId}: the image's remove command exited with ${exitCode}${output}`);
        } finally {
          await helper.remove();
        }
      }
    } catch (error) {
      failures.push(`server ${group.serverId}: ${error instanceof DockerError ? error.reason : (error as Error).message}`);
    } finally {
      await api.close();
    }
  }
  if (failures.length > 0) throw new DriverError(`Some backup files kept on Docker engines could not be removed (${failures.join('; ')}).`);
}

/**
 * The backup's bytes in a local file, held until `release` (backup-cache.ts): the path itself
 * for a local backup; else this node's copy, checked against the backup's SHA-256, fetched from
 * the engine's backups volume when the node has none (or a damaged one).
 */
export async function localBackupFile(db: Kysely<Database>, dataDir: string, backup: { path: string; sha256: string }): Promise<HeldBackupFile> {
  if (!isEngineBackupPath(backup.path)) return { path: backup.path, release: () => undefined };
  const { serverId, name, image } = engineBackupLocation(backup.path);
  const cache = backupCacheOf(dataDir);
  const cached = await cache.cached(name, async (path) => (await sha256OfFile(path)) === backup.sha256);
  if (cached) return cached;
  const server = await db.selectFrom('docker_servers').select(['docker_host']).where('server_id', '=', serverId).executeTakeFirst();
  if (!server) throw new DriverError(`The server that keeps this backup (${serverId}) is no longer a Docker server.`);
  const api = new DockerApi(parseEngineAddress(server.docker_host));
  const fetched = cache.spoolPathOf(basename(name));
  try {
    const helper = await createHelper(api, { image, serviceId: name.split('/')[0] ?? '', serverId, mounts: [await ensureBackupsVolume(api, serverId)] });
    try {
      await extractSingleFile(await api.stream('GET', `/containers/${helper.id}/archive`, { query: { path: `${MOUNT}/${name}` } }), fetched);
    } finally {
      await helper.remove();
    }
    if ((await sha256OfFile(fetched)) !== backup.sha256) {
      throw new DriverError('The backup file kept on the Docker engine does not match its SHA-256 checksum: it was changed or damaged after it was taken.');
    }
    return cache.keep(fetched, name);
  } catch (error) {
    cache.dropSpooled(fetched);
    if (error instanceof DockerError) throw new DriverError(error.reason, false, { cause: error });
    throw error;
  } finally {
    await api.close();
  }
}
