// The local driver's database files: a consistent snapshot of a service's SQLite database (safe
// while the service writes), packed as gzip with its SHA-256 in one pass; and the
// reverse, which proves an archive sound (checksum, gzip, SQLite integrity, ERP tables) before
// anything relies on it. These run in a worker thread (database-worker.ts): a snapshot and an
// integrity check are long synchronous SQLite calls that must not stall the control plane.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { ERP_CORE_TABLES } from '../erp-app/database.js';
import { gzipInParallel } from './parallel-gzip.js';

export { gzipStreamInParallel as compressStreamInParallel } from './parallel-gzip.js';

/** A problem with the data itself; its message is a sentence for the team. */
export class ArchiveProblem extends Error {}

const ALL_PAGES = 0x7fffffff;
/**
 * Up to this size a backup's snapshot is taken in memory (sqlite3_serialize: every page read in
 * one read transaction, about 2.5x faster than the online backup writing a file that is then read
 * back) and compressed straight from there. A larger database goes through a snapshot file, so
 * that a backup never holds more than this in memory.
 */
const IN_MEMORY_SNAPSHOT_BYTES = 256 * 1024 * 1024;

/** Writes one consistent snapshot of `source` to `destination` (replaced if it exists). */
export async function snapshotDatabase(source: string, destination: string): Promise<void> {
  if (!existsSync(source)) {
    throw new ArchiveProblem('The ERP service has no database yet (it has never been started), so there is nothing to back up.');
  }
  rmSync(destination, { force: true });
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // All pages in one step: one read transaction, so the copy is one state of the database even
    // while the service writes (WAL readers do not block it). In several steps, SQLite restarts
    // the copy after every write by the service, which a busy service could make endless.
    await db.backup(destination, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
}

/**
 * Snapshot, compress and checksum `source` into `destination`, which appears whole or not at all.
 * `inMemoryUpTo`: the largest database snapshotted in memory (tests lower it to reach the file path).
 */
export async function packDatabase(
  source: string, destination: string, inMemoryUpTo = IN_MEMORY_SNAPSHOT_BYTES,
): Promise<{ sizeBytes: number; sha256: string }> {
  const partial = `${destination}.partial`;
  try {
    const image = snapshotInMemory(source, inMemoryUpTo);
    const packed = image
      ? await gzipInParallel(async (start, length) => image.subarray(start, start + length), image.length, partial)
      : await packThroughFile(source, `${destination}.snapshot`, partial);
    renameSync(partial, destination);
    return packed;
  } finally {
    rmSync(partial, { force: true });
  }
}

/** The whole database as one consistent image, or undefined when it is too large to hold in memory. */
function snapshotInMemory(source: string, inMemoryUpTo: number): Buffer | undefined {
  if (!existsSync(source)) {
    throw new ArchiveProblem('The ERP service has no database yet (it has never been started), so there is nothing to back up.');
  }
  const db = new SQLite(source, { fileMustExist: true, readonly: true });
  try {
    db.pragma('busy_timeout = 5000');
    // One read transaction around the size and the image: the service may write meanwhile (WAL
    // readers do not block it), and both then describe the same state of the database.
    return db.transaction(() => {
      const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
      return bytes <= inMemoryUpTo ? db.serialize() : undefined;
    })();
  } finally {
    db.close();
  }
}

async function packThroughFile(source: string, snapshot: string, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  try {
    await snapshotDatabase(source, snapshot);
    return await compressInParallel(snapshot, output);
  } finally {
    rmSync(snapshot, { force: true });
    rmSync(`${snapshot}-journal`, { force: true });
  }
}

/** Checks `archive` against `sha256`, unpacks it to `destination` and checks the database in it. */
export async function unpackVerified(archive: string, sha256: string, destination: string): Promise<void> {
  if (!existsSync(archive)) throw new ArchiveProblem('The backup file is missing from the server.');
  const actual = await sha256OfFile(archive);
  if (actual !== sha256) {
    throw new ArchiveProblem(
      `The backup file does not match its SHA-256 checksum (expected ${sha256}, found ${actual}): it was changed or damaged after it was taken.`);
  }
  try {
    await pipeline(createReadStream(archive), createGunzip(), createWriteStream(destination));
  } catch (error) {
    if (!String((error as NodeJS.ErrnoException).code).startsWith('Z_')) throw error;
    throw new ArchiveProblem(`The backup file is not a complete gzip file (${(error as Error).message}).`);
  }
  checkErpDatabase(destination);
}

/** Throws an ArchiveProblem unless `file` is an intact SQLite database with the ERP tables. */
export function checkErpDatabase(file: string): void {
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { fileMustExist: true });
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new ArchiveProblem(`The backup's database failed SQLite's integrity check: ${problems.slice(0, 3).join('; ')}.`);
    }
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
    const missing = ERP_CORE_TABLES.filter((table) => !tables.has(table));
    if (missing.length > 0) throw new ArchiveProblem(`The backup does not hold an ERP database: it has no ${missing.join(', ')} table.`);
  } catch (error) {
    if (error instanceof ArchiveProblem || !(error instanceof SQLite.SqliteError)) throw error;
    throw new ArchiveProblem(`The backup does not hold a sound SQLite database (${error.message}).`);
  } finally {
    db?.close();
  }
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The file `input` as gzip members compressed in parallel into `output` (parallel-gzip.ts); its size and SHA-256. */
export async function compressInParallel(input: string, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  const reader = await open(input, 'r');
  try {
    const { size } = await reader.stat();
    return await gzipInParallel((start, length) => readChunk(reader, start, length), size, output);
  } finally {
    await reader.close();
  }
}

async function readChunk(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new Error(`unexpected end of the snapshot at byte ${position + filled}`);
    filled += bytesRead;
  }
  return buffer;
}
