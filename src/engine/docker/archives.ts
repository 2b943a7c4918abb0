// The tar archives the engine's archive endpoint reads and writes, reshaped for backups: a
// backup of a Docker service is a zstd-compressed tar whose entries are the files of its data
// directory (so `tar --zstd -xf` gives the data back), compressed in a worker thread and
// checksummed as the local driver's are. Restores check the checksum and the whole archive
// before any of it is used; backups taken before zstd are gzip-compressed tars, read the same way.
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract as tarExtract, pack as tarPack } from 'tar-stream';
import { DriverError } from '../driver.js';
import { compressionOfFile, decompressedFile, NOT_COMPRESSED, type PackedFile } from '../backup-compression.js';
import type { BackupCompression } from '../backup-files.js';
import { sha256OfFile } from '../local/backup-archive.js';
import { runDatabaseJob } from '../local/database-job.js';

/**
 * The engine answers an archive of `/x/snap` with entries `snap/...`: the same files, relative
 * to `snap`. `atEnd` is told how many regular files there were; an error it returns ends the
 * stream with that error instead of a whole archive.
 */
export function stripTopDirectory(source: Readable, atEnd?: (files: number) => Error | undefined): Readable {
  const extract = tarExtract();
  const pack = tarPack();
  let files = 0;
  extract.on('entry', (header, stream, next) => {
    const name = header.name.replace(/^\.?\/?[^/]+\/?/, '');
    if (name === '') {
      stream.resume();
      stream.on('end', next);
      return;
    }
    if (header.type === 'file') files += 1;
    const entry = pack.entry({ ...header, name }, (error) => (error ? extract.destroy(error) : next()));
    stream.pipe(entry as unknown as NodeJS.WritableStream);
  });
  extract.on('finish', () => {
    const refusal = atEnd?.(files);
    if (refusal) pack.destroy(refusal);
    else pack.finalize();
  });
  extract.on('error', (error: Error) => pack.destroy(error));
  source.on('error', (error) => extract.destroy(error));
  source.pipe(extract as unknown as NodeJS.WritableStream);
  return Readable.from(pack);
}

/** A tar of one empty directory, `name`, with `mode` and owner: how a folder is made in a container before its command runs. */
export function directoryTar(name: string, mode: number, owner = { uid: 0, gid: 0 }): Readable {
  const pack = tarPack();
  pack.entry({ name, type: 'directory', mode, ...owner });
  pack.finalize();
  return Readable.from(pack);
}

/**
 * Writes `tar` to `destination` compressed (as it arrives, in a worker thread: zstd's calls wait
 * for its threads) and checksummed; the file appears whole or not at all.
 */
export async function packArchive(tar: Readable, destination: string): Promise<PackedFile> {
  try {
    return await runDatabaseJob<PackedFile>({ kind: 'pack-stream', destination }, tar);
  } finally {
    // The worker's own cleanup does not run when it is stopped because the tar failed.
    rmSync(`${destination}.partial`, { force: true });
  }
}

/**
 * Checks the file against its checksum and that it is a complete zstd- (or, before, gzip-)
 * compressed tar; the compression it found, for unpackedTar.
 */
export async function verifyArchive(file: string, sha256: string): Promise<BackupCompression> {
  const actual = await sha256OfFile(file).catch(() => {
    throw new DriverError('The backup file is missing from the server.');
  });
  if (actual !== sha256) {
    throw new DriverError(`The backup file does not match its SHA-256 checksum (expected ${sha256}, found ${actual}): it was changed or damaged after it was taken.`);
  }
  const compression = await compressionOfFile(file);
  if (compression === null) throw new DriverError(NOT_COMPRESSED);
  const extract = tarExtract();
  let entries = 0;
  extract.on('entry', (_header, stream, next) => {
    entries += 1;
    stream.on('end', next);
    stream.resume();
  });
  try {
    await pipeline(decompressedFile(file, compression), extract as unknown as NodeJS.WritableStream);
  } catch (error) {
    // A damaged compressed stream, or a sound one that holds no complete tar.
    throw new DriverError(`The backup file is not a complete ${compression}-compressed tar archive (${(error as Error).message}).`, false, { cause: error });
  }
  if (entries === 0) throw new DriverError('The backup file is an empty archive: it holds no data.');
  return compression;
}

/** The uncompressed tar of a backup verifyArchive checked (and found `compression`), to send to the engine. */
export function unpackedTar(file: string, compression: BackupCompression): Readable {
  return decompressedFile(file, compression);
}

/** A tar holding one file, `name`, with the bytes of `file`: how a file is put into a volume. */
export function singleFileTar(name: string, file: string, sizeBytes: number): Readable {
  const pack = tarPack();
  // Its folders first: the engine does not create the parents of an entry.
  const parts = name.split('/').slice(0, -1);
  parts.forEach((_part, index) => pack.entry({ name: parts.slice(0, index + 1).join('/'), type: 'directory', mode: 0o700 }));
  const entry = pack.entry({ name, size: sizeBytes, mode: 0o600 }, (error) => (error ? pack.destroy(error) : pack.finalize()));
  createReadStream(file).on('error', (error) => pack.destroy(error)).pipe(entry as unknown as NodeJS.WritableStream);
  return Readable.from(pack);
}

/** The bytes of the first file in `tar` (an archive of one file), into `destination`. */
export async function extractSingleFile(tar: Readable, destination: string): Promise<void> {
  const extract = tarExtract();
  let found = false;
  const written: Promise<void>[] = [];
  extract.on('entry', (header, stream, next) => {
    if (found || header.type !== 'file') {
      stream.on('end', next);
      stream.resume();
      return;
    }
    found = true;
    written.push(pipeline(stream, createWriteStream(destination, { mode: 0o600 })).then(() => next()));
  });
  await pipeline(tar, extract as unknown as NodeJS.WritableStream);
  await Promise.all(written);
  if (!found) throw new DriverError('The engine answered an archive without the backup file in it.');
}
