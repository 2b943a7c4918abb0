// The local driver's database files: a consistent snapshot of a service's SQLite database (the
// online backup API, safe while the service writes), packed as gzip with its SHA-256; and the
// reverse, which proves an archive sound (checksum, gzip, SQLite integrity, ERP tables) before
// anything relies on it. These run in a worker thread (database-worker.ts): a snapshot and an
// integrity check are long synchronous SQLite calls that must not stall the control plane.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip, gzip } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { ERP_CORE_TABLES } from '../erp-app/database.js';

/** A problem with the data itself; its message is a sentence for the team. */
export class ArchiveProblem extends Error {}

const gzipAsync = promisify(gzip);
// Each chunk becomes one gzip member (RFC 1952 allows a series; gunzip, zcat and zlib read them
// whole), so chunks compress in parallel on the thread pool. Level 1: deflate is the slow part
// of a backup, and level 6 costs about 4x the time for a file about 15% smaller.
const CHUNK_BYTES = 8 * 1024 * 1024;
const LEVEL = 1;
const ALL_PAGES = 0x7fffffff;

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

/** Snapshot, compress and checksum `source` into `destination`, which appears whole or not at all. */
export async function packDatabase(source: string, destination: string): Promise<{ sizeBytes: number; sha256: string }> {
  const snapshot = `${destination}.snapshot`;
  const partial = `${destination}.partial`;
  try {
    await snapshotDatabase(source, snapshot);
    const packed = await compressInParallel(snapshot, partial);
    renameSync(partial, destination);
    return packed;
  } finally {
    rmSync(snapshot, { force: true });
    rmSync(`${snapshot}-journal`, { force: true });
    rmSync(partial, { force: true });
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

/** gzip members of 8 MiB compressed in parallel into `output`; its size and SHA-256. */
export async function compressInParallel(input: string, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  return compressStreamInParallel(createReadStream(input, { highWaterMark: 1024 * 1024 }), output);
}

/**
 * The same from a stream (a tar the Docker engine is sending): each 8 MiB is compressed as soon
 * as it has arrived, while the next arrives, so receiving and compressing overlap and the
 * uncompressed bytes are never written to disk.
 */
export async function compressStreamInParallel(source: AsyncIterable<Buffer>, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  const writer = await open(output, 'w', 0o600);
  try {
    const parallel = Math.max(2, availableParallelism());
    const inFlight: Promise<Buffer>[] = [];
    const hash = createHash('sha256');
    let sizeBytes = 0;
    const compress = (chunk: Buffer) => {
      const member = gzipAsync(chunk, { level: LEVEL });
      // Awaited in order below; this only keeps a failure that comes early from counting as unhandled.
      member.catch(() => undefined);
      inFlight.push(member);
    };
    const writeOldest = async () => {
      const member = await (inFlight.shift() as Promise<Buffer>);
      hash.update(member);
      await writer.write(member);
      sizeBytes += member.length;
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let chunks = 0;
    for await (const piece of source) {
      pending.push(piece);
      pendingBytes += piece.length;
      while (pendingBytes >= CHUNK_BYTES) {
        const joined = Buffer.concat(pending);
        compress(joined.subarray(0, CHUNK_BYTES));
        chunks += 1;
        pending = pendingBytes > CHUNK_BYTES ? [joined.subarray(CHUNK_BYTES)] : [];
        pendingBytes -= CHUNK_BYTES;
        if (inFlight.length >= parallel) await writeOldest();
      }
    }
    // The rest; an empty input is one empty member, still a valid gzip file.
    if (pendingBytes > 0 || chunks === 0) compress(Buffer.concat(pending));
    while (inFlight.length > 0) await writeOldest();
    await writer.sync();
    return { sizeBytes, sha256: hash.digest('hex') };
  } finally {
    await writer.close();
  }
}
