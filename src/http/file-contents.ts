// The bytes of an offered file, on whichever node serves the download: a file of this node, a
// backup kept on a Docker engine (this node's copy, fetched when it has none and checked
// against its SHA-256: backup-store.ts), or a caught email's raw message, kept in the database.
// A file of this node is checked against its recorded size and SHA-256 first (file-integrity.ts).
// Resolved when the file is served, not when a download link is made, so that a link made
// through one node works through any other.
import { existsSync } from 'node:fs';
import type { FileSource } from '../core/capability.js';
import { AppError } from '../core/errors.js';
import type { Db } from '../db/connect.js';
import { rawMessageOf } from '../db/repositories/caught-emails.js';
import { isEngineBackupPath } from '../engine/docker/engine-backup-path.js';
import { DriverError } from '../engine/driver.js';
import { assertIntact } from './file-integrity.js';

/**
 * `afterSent`: told once the answer that reads the file has ended, whether it sent the file to
 * its last byte; a node's copy of an engine backup is let go then (backup-cache.ts).
 */
export type FileContents = { path: string; afterSent?: (toTheEnd: boolean) => void } | { bytes: Buffer };

const CAUGHT_EMAIL = 'caught-email:';

export function caughtEmailPath(emailId: string): string {
  return `${CAUGHT_EMAIL}${emailId}`;
}

export async function contentsOf(db: Db, file: FileSource): Promise<FileContents> {
  if (file.path.startsWith(CAUGHT_EMAIL)) {
    const bytes = await rawMessageOf(db.kysely, file.path.slice(CAUGHT_EMAIL.length));
    if (!bytes) throw new AppError('not_found', `${file.filename} is no longer kept: the mail catcher keeps a limited number of emails per copy.`);
    return { bytes };
  }
  if (isEngineBackupPath(file.path)) {
    try {
      // Loaded here: the Docker engine client is needed for this only (the stdio server loads this module).
      const { localBackupFile } = await import('../engine/docker/backup-store.js');
      const held = await localBackupFile(db.kysely, db.dataDir, { path: file.path, sha256: file.sha256 ?? '' });
      // Downloaded to its end, the node's copy has served: the engine keeps the backup.
      return { path: held.path, afterSent: (toTheEnd) => held.release(toTheEnd) };
    } catch (error) {
      if (error instanceof DriverError) throw new AppError('conflict', `${file.filename} cannot be read: ${error.reason}`);
      throw error;
    }
  }
  if (!existsSync(file.path)) throw new AppError('conflict', `${file.filename} is no longer on the server.`);
  await assertIntact(file.path, file);
  return { path: file.path };
}
