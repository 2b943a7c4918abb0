// Backups of Docker services are kept on their server's engine, in its backups volume, so that
// any control-plane node can serve or restore them (several nodes share one PostgreSQL, not a
// disk). A backup's path is then docker://SERVER/SERVICE/FILE?image=IMAGE; a node that needs
// the bytes fetches them once through the engine's API into its own data directory, checked
// against the backup's SHA-256.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { DriverError, type ServerSpec } from '../driver.js';
import { sha256OfFile } from '../local/backup-archive.js';
import { extractSingleFile, singleFileTar } from './archives.js';
import { createHelper } from './containers.js';
import { DockerApi, DockerError } from './docker-api.js';
import { parseEngineAddress } from './engine-address.js';
import { ENGINE_BACKUP_SCHEME, isEngineBackupPath } from './engine-backup-path.js';
import { backupsVolumeName } from './labels.js';

const MOUNT = '/teaminfra-backups';
const SCHEME = ENGINE_BACKUP_SCHEME;

export { isEngineBackupPath };

/** The server's backups volume, as a helper mounts it to put a backup in or take one out. */
export function backupsMount(serverId: string): { volume: string; at: string } {
  return { volume: backupsVolumeName(serverId), at: MOUNT };
}

/**
 * Puts `file` into the server's backups volume through `helperId`, a helper container that
 * mounts it (backupsMount); returns the backup's path.
 */
export async function storeBackupOnEngine(
  api: DockerApi, helperId: string, server: ServerSpec, serviceId: string, file: string, sizeBytes: number, image: string,
): Promise<string> {
  const name = `${serviceId}/${basename(file)}`;
  await api.upload('PUT', `/containers/${helperId}/archive`, singleFileTar(name, file, sizeBytes), 'application/x-tar', { query: { path: MOUNT }, timeoutMs: 30 * 60_000 });
  return `${SCHEME}//${server.id}/${name}?image=${encodeURIComponent(image)}`;
}

/** A local file with the backup's bytes: the path itself for a local backup, else a checked copy fetched from the engine. */
export async function localBackupFile(db: Kysely<Database>, dataDir: string, backup: { path: string; sha256: string }): Promise<string> {
  if (!isEngineBackupPath(backup.path)) return backup.path;
  const url = new URL(backup.path);
  const serverId = url.hostname;
  const name = decodeURIComponent(url.pathname.slice(1));
  const image = url.searchParams.get('image') ?? '';
  const cached = join(dataDir, 'backups', name);
  if (existsSync(cached) && (await sha256OfFile(cached)) === backup.sha256) return cached;
  const server = await db.selectFrom('docker_servers').select(['docker_host']).where('server_id', '=', serverId).executeTakeFirst();
  if (!server) throw new DriverError(`The server that keeps this backup (${serverId}) is no longer a Docker server.`);
  const api = new DockerApi(parseEngineAddress(server.docker_host));
  const partial = `${cached}.fetching`;
  try {
    mkdirSync(dirname(cached), { recursive: true, mode: 0o700 });
    const helper = await createHelper(api, { image, serviceId: name.split('/')[0] ?? '', serverId, mounts: [backupsMount(serverId)] });
    try {
      await extractSingleFile(await api.stream('GET', `/containers/${helper.id}/archive`, { query: { path: `${MOUNT}/${name}` }, timeoutMs: 30 * 60_000 }), partial);
    } finally {
      await helper.remove();
    }
    if ((await sha256OfFile(partial)) !== backup.sha256) {
      throw new DriverError('The backup file kept on the Docker engine does not match its SHA-256 checksum: it was changed or damaged after it was taken.');
    }
    renameSync(partial, cached);
    return cached;
  } catch (error) {
    if (error instanceof DockerError) throw new DriverError(error.reason, false, { cause: error });
    throw error;
  } finally {
    rmSync(partial, { force: true });
    await api.close();
  }
}
