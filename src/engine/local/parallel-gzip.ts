// Compresses bytes into a gzip file in one pass: the bytes are cut into 8 MiB pieces, each becomes
// one gzip member (RFC 1952 allows a series; gunzip, zcat and zlib read them whole), the members
// are compressed in parallel on the thread pool, then hashed (SHA-256) and written in order as
// they come back. Where the bytes come from is the caller's (a buffer in memory, a file).
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { gzip, type ZlibOptions } from 'node:zlib';

const gzipAsync = promisify(gzip);

export const MEMBER_BYTES = 8 * 1024 * 1024;

// Chosen by measurement on an ERP database of 106 MB (bench/backups.bench.ts; 32 MB pieces, best
// of 4, one core): level 1 compresses about 100-120 MB/s to 50% of the size; level 2 is 10-15%
// slower for 2% smaller, level 6 four times slower for 20% smaller, Huffman-only 40% faster but
// only to 75%. memLevel 9 (zlib's largest hash tables) is 15% faster than the default 8 at level
// 1, for the same size. Deflate is the slow part of a backup, so the fastest level that still
// halves the file wins.
export const GZIP_OPTIONS: ZlibOptions = { level: 1, memLevel: 9 };

/** Reads `length` bytes at `start` of whatever is being compressed. */
export type ReadPiece = (start: number, length: number) => Promise<Buffer>;

/** Compresses `size` bytes read through `read` into `output` (created or replaced); its size and SHA-256. */
export async function gzipInParallel(read: ReadPiece, size: number, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  const writer = await open(output, 'w');
  try {
    const members = Math.max(1, Math.ceil(size / MEMBER_BYTES));
    const parallel = Math.max(2, availableParallelism());
    const compress = (index: number): Promise<Buffer> => {
      const start = index * MEMBER_BYTES;
      const member = read(start, Math.min(MEMBER_BYTES, size - start)).then((piece) => gzipAsync(piece, GZIP_OPTIONS));
      // Awaited in order below; this only keeps a failure that comes early from counting as unhandled.
      member.catch(() => undefined);
      return member;
    };
    const inFlight: Promise<Buffer>[] = [];
    let next = 0;
    while (next < members && inFlight.length < parallel) inFlight.push(compress(next++));
    const hash = createHash('sha256');
    let sizeBytes = 0;
    while (inFlight.length > 0) {
      const member = await (inFlight.shift() as Promise<Buffer>);
      if (next < members) inFlight.push(compress(next++));
      hash.update(member);
      await writer.write(member);
      sizeBytes += member.length;
    }
    // A backup is only a backup once it is on the disk.
    await writer.sync();
    return { sizeBytes, sha256: hash.digest('hex') };
  } finally {
    await writer.close();
  }
}

/**
 * The same from a stream (a tar the Docker engine is sending), whose size is not known ahead: each
 * 8 MiB is compressed as soon as it has arrived, while the next arrives, so receiving and
 * compressing overlap and the uncompressed bytes are never written to disk.
 */
export async function gzipStreamInParallel(source: AsyncIterable<Buffer>, output: string): Promise<{ sizeBytes: number; sha256: string }> {
  const writer = await open(output, 'w', 0o600);
  try {
    const parallel = Math.max(2, availableParallelism());
    const inFlight: Promise<Buffer>[] = [];
    const hash = createHash('sha256');
    let sizeBytes = 0;
    const compress = (piece: Buffer) => {
      const member = gzipAsync(piece, GZIP_OPTIONS);
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
    let members = 0;
    for await (const piece of source) {
      pending.push(piece);
      pendingBytes += piece.length;
      while (pendingBytes >= MEMBER_BYTES) {
        const joined = Buffer.concat(pending);
        compress(joined.subarray(0, MEMBER_BYTES));
        members += 1;
        pending = pendingBytes > MEMBER_BYTES ? [joined.subarray(MEMBER_BYTES)] : [];
        pendingBytes -= MEMBER_BYTES;
        if (inFlight.length >= parallel) await writeOldest();
      }
    }
    // The rest; an empty input is one empty member, still a valid gzip file.
    if (pendingBytes > 0 || members === 0) compress(Buffer.concat(pending));
    while (inFlight.length > 0) await writeOldest();
    await writer.sync();
    return { sizeBytes, sha256: hash.digest('hex') };
  } finally {
    await writer.close();
  }
}
