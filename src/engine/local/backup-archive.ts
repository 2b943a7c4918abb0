// The local driver's backup files: a consistent snapshot of a service's SQLite database, packed
// with zstd and its SHA-256 in one pass (backup-compression.ts); and the reverse, which proves an
// archive sound (checksum, a complete zstd or gzip stream, SQLite integrity, ERP tables) before
// anything relies on it. These run in a worker thread (database-worker.ts): a snapshot, the
// compression and an integrity check are long calls that must not stall the control plane.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import {
  compressionOfFile, compressToFile, decompressedFile, isDamagedCompression, NOT_COMPRESSED, PIECE_BYTES, type PackedFile,
} from '../backup-compression.js';
import { ArchiveProblem, checkErpDatabase, NO_DATABASE_YET, snapshotDatabase } from './database-snapshot.js';

/**
 * Up to this size a backup's snapshot is taken in memory (sqlite3_serialize: every page read in
 * one read transaction, about 2.5x faster than the online backup writing a file that is then read
 * back) and compressed straight from there. A larger database goes through a snapshot file, so
 * that a backup never holds more than this in memory.
 */
const IN_MEMORY_SNAPSHOT_BYTES = 256 * 1024 * 1024;

/**
 * Snapshot, compress and checksum `source` into `destination`, which appears whole or not at all.
 * `inMemoryUpTo`: the largest database snapshotted in memory (tests lower it to reach the file path).
 */
export async function packDatabase(source: string, destination: string, inMemoryUpTo = IN_MEMORY_SNAPSHOT_BYTES): Promise<PackedFile> {
  return writeWholeOrNot(destination, async (partial) => {
    const image = snapshotInMemory(source, inMemoryUpTo);
    return image ? compressToFile([image], partial) : packThroughFile(source, `${destination}.snapshot`, partial);
  });
}

/** Compresses and checksums what arrives on `source` (a Docker service's tar) into `destination`, whole or not at all. */
export async function packStream(source: AsyncIterable<Uint8Array>, destination: string): Promise<PackedFile> {
  return writeWholeOrNot(destination, (partial) => compressToFile(source, partial));
}

async function writeWholeOrNot(destination: string, write: (partial: string) => Promise<PackedFile>): Promise<PackedFile> {
  const partial = `${destination}.partial`;
  try {
    const packed = await write(partial);
    renameSync(partial, destination);
    return packed;
  } finally {
    rmSync(partial, { force: true });
  }
}

/** The whole database as one consistent image, or undefined when it is too large to hold in memory. */
function snapshotInMemory(source: string, inMemoryUpTo: number): Buffer | undefined {
  if (!existsSync(source)) throw new ArchiveProblem(NO_DATABASE_YET);
  const db = new SQLite(source, { fileMustExist: true, readonly: true });
  try {
    db.pragma('busy_timeout = 5000');
    // Pages read through a memory map instead of one read() each: the image of a 106 MB database
    // in 49 ms instead of 74 (bench/backups.bench.ts). Only this read-only connection maps the file.
    db.pragma(`mmap_size = ${inMemoryUpTo}`);
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

async function packThroughFile(source: string, snapshot: string, output: string): Promise<PackedFile> {
  try {
    await snapshotDatabase(source, snapshot);
    return await compressToFile(createReadStream(snapshot, { highWaterMark: PIECE_BYTES }), output);
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
  const compression = await compressionOfFile(archive);
  if (compression === null) throw new ArchiveProblem(NOT_COMPRESSED);
  try {
    await pipeline(decompressedFile(archive, compression), createWriteStream(destination));
  } catch (error) {
    if (!isDamagedCompression(error)) throw error;
    throw new ArchiveProblem(`The backup file is not a complete ${compression} file (${(error as Error).message}).`);
  }
  checkErpDatabase(destination);
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
