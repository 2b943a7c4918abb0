// Puts a restored database in place of a (stopped) service's own, atomically: rename() replaces
// the file in one step, so a reader or a crash sees the old database or the new one, never a
// mix. The old file is kept (a hard link, `.previous`) until the service runs on the new one,
// so a restore that does not start can be undone in one rename too.
import { existsSync, linkSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { DATABASE_FILE } from '../erp-app/config.js';

const previousOf = (current: string) => `${current}.previous`;

export function swapInDatabase(serviceDir: string, staged: string): void {
  const current = join(serviceDir, DATABASE_FILE);
  foldWriteAheadLog(current);
  rmSync(previousOf(current), { force: true });
  if (existsSync(current)) linkSync(current, previousOf(current));
  replaceDatabase(current, staged);
}

/** Puts the database from before the swap back (none, if the service had none). */
export function rollBackSwap(serviceDir: string): void {
  const current = join(serviceDir, DATABASE_FILE);
  if (existsSync(previousOf(current))) replaceDatabase(current, previousOf(current));
  else removeDatabase(current);
}

export function removeDatabase(database: string): void {
  removeSidecars(database);
  rmSync(database, { force: true });
}

export function dropPreviousDatabase(serviceDir: string): void {
  rmSync(previousOf(join(serviceDir, DATABASE_FILE)), { force: true });
}

/** Replaces `target` (of a service that is not running) with `staged`. */
export function replaceDatabase(target: string, staged: string): void {
  // Sidecars first: a crash in between must not leave the old file's log beside the new file.
  removeSidecars(target);
  renameSync(staged, target);
}

// A write-ahead log left by a process that was killed holds the newest changes of the current
// database: checkpoint it into the file first, so that `.previous` is complete.
function foldWriteAheadLog(current: string): void {
  if (!existsSync(`${current}-wal`) || statSync(`${current}-wal`).size === 0) return;
  const db = new SQLite(current, { fileMustExist: true });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

// Never let the old database's log or shared memory be applied to the new file.
function removeSidecars(database: string): void {
  rmSync(`${database}-wal`, { force: true });
  rmSync(`${database}-shm`, { force: true });
  rmSync(`${database}-journal`, { force: true });
}
