// How backups are compressed: Zstandard, written and checksummed (SHA-256) in one pass; and read
// back, zstd or the gzip of the backups taken before, told apart by their first bytes.
//
// Chosen by measurement (bench/backups.bench.ts; a 106 MB ERP database, 2 cores, best of 5): zstd
// level 1 with 2 worker threads compresses it in about 200 ms to 49% of its size, where gzip level
// 1 took 960 ms in one call (480 ms on both cores) to 51%; level -1 is 10% faster to 55%, level 3
// 45% slower for 2% smaller. Each frame carries zstd's own checksum (XXH64, a few ms) so that a
// damaged file is refused while it is read, as gzip's CRC did, not only by the SHA-256 before.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CompressStream, DecompressStream } from 'zstd-napi';
import type { BackupCompression } from './backup-files.js';

export const ZSTD_PARAMETERS = {
  compressionLevel: 1,
  // zstd's own threads (it is built with ZSTD_MULTITHREAD): measured with 2; capped at 4 so that
  // a backup does not take every core of a larger control-plane machine (not measured there).
  nbWorkers: Math.min(4, Math.max(2, availableParallelism())),
  checksumFlag: true,
} as const;

/**
 * What zstd is handed at a time. Its threads work on jobs of about 2 MiB; a piece of 1 MiB kept
 * them waiting (480 ms for the database above instead of 280 ms), so small chunks from a
 * stream are gathered first.
 */
export const PIECE_BYTES = 4 * 1024 * 1024;

export interface PackedFile { sizeBytes: number; sha256: string }

/**
 * Compresses `source` into `output` (created or replaced, mode 0600), hashing what is written.
 * The compression runs on zstd's threads, but each call into it waits for them: call this from
 * a worker thread (database-worker.ts), never from the control plane's event loop.
 */
export async function compressToFile(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, output: string): Promise<PackedFile> {
  const writer = await open(output, 'w', 0o600);
  try {
    const hash = createHash('sha256');
    let sizeBytes = 0;
    await pipeline(Readable.from(inPieces(source), { objectMode: false }), new CompressStream(ZSTD_PARAMETERS), async (compressed: AsyncIterable<Buffer>) => {
      for await (const chunk of compressed) {
        hash.update(chunk);
        await writer.write(chunk);
        sizeBytes += chunk.length;
      }
    });
    // A backup is only a backup once it is on the disk.
    await writer.sync();
    return { sizeBytes, sha256: hash.digest('hex') };
  } finally {
    await writer.close();
  }
}

/** `source` again, in pieces of PIECE_BYTES (the last one shorter): large ones cut, small ones gathered. */
async function* inPieces(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of source) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (pendingBytes + rest.length >= PIECE_BYTES) {
      const take = PIECE_BYTES - pendingBytes;
      yield pending.length === 0 ? rest.subarray(0, take) : Buffer.concat([...pending, rest.subarray(0, take)]);
      rest = rest.subarray(take);
      pending = [];
      pendingBytes = 0;
    }
    if (rest.length > 0) {
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending);
}

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** What a backup whose compression is null (compressionOfFile) is refused with. */
export const NOT_COMPRESSED = 'The backup file is neither zstd- nor gzip-compressed, so it is not a backup teaminfra took.';

/** The compression `file` starts with, or null when it is neither of ours. */
export async function compressionOfFile(file: string): Promise<BackupCompression | null> {
  const reader = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await reader.read(Buffer.alloc(4), 0, 4, 0);
    const head = buffer.subarray(0, bytesRead);
    if (head.length === 4 && head.equals(ZSTD_MAGIC)) return 'zstd';
    if (head.length >= 2 && head.subarray(0, 2).equals(GZIP_MAGIC)) return 'gzip';
    return null;
  } finally {
    await reader.close();
  }
}

/** zstd-napi fails a damaged frame with a plain Error; CheckedZstdDecompress makes it one of these. */
export class DamagedCompression extends Error {}

/** Whether a stream failed because the compressed data is damaged or cut short (not because writing what it holds failed). */
export function isDamagedCompression(error: unknown): boolean {
  // zlib names its failures Z_*.
  return error instanceof DamagedCompression || String((error as NodeJS.ErrnoException)?.code).startsWith('Z_');
}

/** `file` decompressed as `compression`; a damaged file fails the stream (isDamagedCompression). */
export function decompressedFile(file: string, compression: BackupCompression): Readable {
  const decompress = compression === 'zstd' ? new CheckedZstdDecompress() : createGunzip();
  const reader = createReadStream(file, { highWaterMark: 1024 * 1024 });
  reader.on('error', (error) => decompress.destroy(error));
  return reader.pipe(decompress);
}

class CheckedZstdDecompress extends DecompressStream {
  override _transform(chunk: unknown, encoding: string, done: TransformCallback): void {
    super._transform(chunk, encoding, (error?: Error | null, data?: unknown) => done(error ? new DamagedCompression(error.message) : null, data));
  }

  override _flush(done: TransformCallback): void {
    super._flush((error?: Error | null, data?: unknown) => done(error ? new DamagedCompression(error.message) : null, data));
  }
}
