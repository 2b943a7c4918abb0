// A restore when the server's copy of the backup is gone (deleted, its volume lost, its server
// dead): the off-site copy is fetched, decrypted with the team's key and checked against the
// backup's SHA-256 into the place the driver reads a backup from (the node's copy of an engine's
// backup, docker/backup-cache.ts; the file itself for a local backup), held there for the
// restore, which then runs as always. Nothing of the driver changes: it finds the bytes where it
// looks first. The server's copy is tried first; its failure is recorded (the backup's
// `locations` then say so).
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { findOffsiteCopy } from '../db/repositories/offsite-copies.js';
import { DriverError } from '../engine/driver.js';
import { engineBackupLocation, isEngineBackupPath } from '../engine/docker/engine-backup-path.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { decrypting } from './backup-key.js';
import { openBackupIdentity, openDestination } from './destinations.js';
import { ObjectStore } from './object-store.js';
import { storeFailureOf } from './store-failure.js';

interface RestoredBackup { id: string; team_id: string; file_path: string; sha256: string }

/**
 * Runs `restore` once the backup's bytes are where the driver reads them (`path`, the backup's own
 * but for a drill of a local backup): as they are when the server's copy reads well, else fetched
 * from off-site (when the backup has a stored copy there); `serverLost`: straight from off-site (a
 * recovery: recover.ts); `offsiteOnly`: straight from off-site, the server's copy neither asked
 * nor marked (a restore drill proves the off-site copy: restore-drills/restore-drill.ts).
 */
export async function withRestorableBackup<T>(
  db: Kysely<Database>, secrets: SecretBox, dataDir: string, backup: RestoredBackup, restore: (path: string) => Promise<T>,
  options: { serverLost?: boolean; offsiteOnly?: { scratch: string } } = {},
): Promise<T> {
  const copy = await findOffsiteCopy(db, backup.id);
  if (copy?.state !== 'stored') {
    if (options.serverLost) throw new DriverError(`Backup ${backup.id} has no copy stored off-site, and its server is lost.`);
    if (options.offsiteOnly) throw new DriverError('The backup has no copy stored off-site.');
    return restore(backup.file_path);
  }
  // A lost server is not asked (its engine would only time out).
  const serverCopy = options.serverLost ? "The server's copy of the backup is gone with its server."
    : options.offsiteOnly ? null : await readsFromServer(db, dataDir, backup);
  if (serverCopy === null && !options.offsiteOnly) return restore(backup.file_path);
  if (serverCopy !== null) await db.updateTable('backups').set({ server_copy_reason: serverCopy }).where('id', '=', backup.id).execute();
  // A drill of a local backup is fetched beside it, never over the server's copy.
  const target = isEngineBackupPath(backup.file_path) ? await engineCacheTarget(dataDir, backup.file_path)
    : localTarget(options.offsiteOnly ? options.offsiteOnly.scratch : backup.file_path);
  // Fetched into the spool, which the next start clears: a process killed mid-fetch leaves no partial copy behind.
  const spool = await spoolOf(dataDir);
  const partial = spool.spoolPathOf(`${basename(target.path)}.offsite`);
  try {
    mkdirSync(dirname(target.path), { recursive: true, mode: 0o700 });
    await fetchOffsite(db, secrets, backup, copy, partial);
    renameSync(partial, target.path);
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    const fetched = error.reason.replace(/\.$/, '');
    throw new DriverError(serverCopy === null ? `The off-site copy could not be fetched (${fetched}).`
      : `${serverCopy.replace(/\.$/, '')}, and its off-site copy could not be fetched (${fetched}), so nothing was restored.`, false, { cause: error });
  } finally {
    spool.dropSpooled(partial);
  }
  const held = await target.hold();
  try {
    return await restore(isEngineBackupPath(backup.file_path) ? backup.file_path : target.path);
  } finally {
    held.release();
  }
}

/** null when the server's copy reads (and matches its checksum); else the sentence saying why not. */
async function readsFromServer(db: Kysely<Database>, dataDir: string, backup: RestoredBackup): Promise<string | null> {
  if (!isEngineBackupPath(backup.file_path)) return existsSync(backup.file_path) ? null : "The server's copy of the backup is gone.";
  const { localBackupFile } = await import('../engine/docker/backup-store.js');
  try {
    // Left in the node's cache (within its bound), where the driver finds it next.
    (await localBackupFile(db, dataDir, { path: backup.file_path, sha256: backup.sha256 })).release();
    return null;
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    return `The server's copy of the backup could not be read (${error.reason.replace(/\.$/, '')}).`;
  }
}

/** The node's backup spool (DATA_DIR/backup-spool, on the same disk as every target here; cleared at each start: backup-cache.ts). */
async function spoolOf(dataDir: string): Promise<{ spoolPathOf(name: string): string; dropSpooled(path: string): void }> {
  const { backupCacheOf } = await import('../engine/docker/backup-cache.js');
  return backupCacheOf(dataDir);
}

/** Where the node keeps its copy of an engine's backup (docker://SERVER/SERVICE/FILE: SERVICE/FILE in the cache), and how to hold it there for the restore. */
async function engineCacheTarget(dataDir: string, path: string): Promise<{ path: string; hold(): Promise<{ release(): void }> }> {
  const { backupCacheOf } = await import('../engine/docker/backup-cache.js');
  const cache = backupCacheOf(dataDir);
  const { name } = engineBackupLocation(path);
  return {
    path: cache.pathOf(name),
    // Held, so that no other backup's copy makes room by removing it before the driver reads it,
    // even beyond the cache's bound for the time of the restore; let go after it.
    hold: async () => (await cache.cached(name, async () => true)) ?? { release: () => undefined },
  };
}

function localTarget(path: string): { path: string; hold(): Promise<{ release(): void }> } {
  return { path, hold: async () => ({ release: () => undefined }) };
}

async function fetchOffsite(
  db: Kysely<Database>, secrets: SecretBox, backup: RestoredBackup, copy: { destination_id: string; object_key: string }, file: string,
): Promise<void> {
  const destination = await openDestination(db, secrets, copy.destination_id);
  const identity = await openBackupIdentity(db, secrets, backup.team_id);
  const store = await ObjectStore.open(destination);
  const hash = createHash('sha256');
  try {
    let sealed;
    try {
      sealed = await store.read(copy.object_key);
    } catch (error) {
      throw new DriverError(storeFailureOf(error, 'Reading the off-site copy', destination).sentence, false, { cause: error });
    }
    try {
      await pipeline(await decrypting(sealed, identity), new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          hash.update(chunk);
          callback(null, chunk);
        },
      }), createWriteStream(file, { mode: 0o600 }));
    } catch (error) {
      if ((error as { $metadata?: unknown }).$metadata !== undefined || (error as { code?: string }).code?.startsWith('E')) {
        throw new DriverError(storeFailureOf(error, 'Reading the off-site copy', destination).sentence, false, { cause: error });
      }
      throw new DriverError('the off-site copy does not open with the team\'s backup key: it was changed or damaged in the store', false, { cause: error });
    }
    if (hash.digest('hex') !== backup.sha256) {
      throw new DriverError('the off-site copy does not match the backup\'s SHA-256 checksum: it was changed or damaged in the store');
    }
  } finally {
    store.close();
  }
}

