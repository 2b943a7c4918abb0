// How backups are compressed: whatever the shape of the bytes coming in (one large image, a
// stream of small chunks, nothing), the file is one zstd stream that gives them back whole, with
// the size and SHA-256 of what was written; the first bytes of a file tell zstd from the gzip of
// older backups; and a stream packed in the worker that fails midway leaves no file behind.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { decompress as zstdDecompress } from 'zstd-napi';
import { compressionOfFile, compressToFile, decompressedFile, PIECE_BYTES } from '../../src/engine/backup-compression.js';
import { packArchive } from '../../src/engine/docker/archives.js';
import { tempDataDir } from '../support/fixtures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Text-like bytes (compressible) with some noise, `size` long. */
function sampleBytes(size: number): Buffer {
  const text = Buffer.from('INSERT INTO customers VALUES (42, "Customer", "c42@example.com", "Ghent");\n'.repeat(Math.ceil(size / 60)));
  const bytes = text.subarray(0, size);
  const noise = randomBytes(Math.floor(size / 100));
  for (let index = 0; index < noise.length; index++) bytes[(index * 97) % size] = noise[index] as number;
  return bytes;
}

describe('backup compression', () => {
  const dir = tempDataDir();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function roundTrip(name: string, chunks: Buffer[] | AsyncIterable<Buffer>): Promise<{ file: string; written: Buffer }> {
    const file = join(dir, name);
    const packed = await compressToFile(chunks, file);
    const written = readFileSync(file);
    expect(packed).toEqual({ sizeBytes: written.length, sha256: sha256(written) });
    return { file, written };
  }

  it('packs one image larger than a piece into a zstd file that gives it back whole, smaller', async () => {
    const image = sampleBytes(3 * PIECE_BYTES + 12_345);
    const { written } = await roundTrip('image.zst', [image]);
    expect(written.length).toBeLessThan(image.length / 2);
    expect(zstdDecompress(written).equals(image)).toBe(true);
  });

  it('packs a stream of small chunks, gathered into pieces, to the same bytes in the same order', async () => {
    const whole = sampleBytes(PIECE_BYTES + 777_777);
    async function* smallChunks() {
      for (let at = 0; at < whole.length; at += 65_536 + 3) yield whole.subarray(at, at + 65_536 + 3);
    }
    const { file } = await roundTrip('stream.zst', smallChunks());
    const back = Buffer.concat(await decompressedFile(file, 'zstd').toArray() as Buffer[]);
    expect(back.equals(whole)).toBe(true);
  });

  it('packs nothing into a valid zstd file of nothing', async () => {
    const { file } = await roundTrip('empty.zst', []);
    expect(await compressionOfFile(file)).toBe('zstd');
    expect(Buffer.concat(await decompressedFile(file, 'zstd').toArray() as Buffer[]).length).toBe(0);
  });

  it('tells zstd from gzip by the first bytes (and reads gzip back), and neither from a plain file or an empty one', async () => {
    const { file } = await roundTrip('told.zst', [sampleBytes(1000)]);
    const gzip = join(dir, 'told.gz');
    const older = sampleBytes(1000);
    writeFileSync(gzip, gzipSync(older));
    const plain = join(dir, 'told.sqlite');
    writeFileSync(plain, 'SQLite format 3\0');
    const empty = join(dir, 'told.empty');
    writeFileSync(empty, '');
    expect([await compressionOfFile(file), await compressionOfFile(gzip), await compressionOfFile(plain), await compressionOfFile(empty)])
      .toEqual(['zstd', 'gzip', null, null]);
    expect(Buffer.concat(await decompressedFile(gzip, 'gzip').toArray() as Buffer[]).equals(older)).toBe(true);
  });

  it('packs a stream in the worker thread, and leaves no file when the stream fails midway', async () => {
    const whole = sampleBytes(2 * PIECE_BYTES);
    const packed = await packArchive(Readable.from([whole.subarray(0, PIECE_BYTES), whole.subarray(PIECE_BYTES)]), join(dir, 'worker.tar.zst'));
    expect(packed.sha256).toBe(sha256(readFileSync(join(dir, 'worker.tar.zst'))));
    expect(zstdDecompress(readFileSync(join(dir, 'worker.tar.zst'))).equals(whole)).toBe(true);

    async function* failing() {
      yield whole.subarray(0, PIECE_BYTES);
      throw new Error('the engine closed the connection');
    }
    const destination = join(dir, 'failed.tar.zst');
    await expect(packArchive(Readable.from(failing()), destination)).rejects.toThrow('the engine closed the connection');
    expect([existsSync(destination), existsSync(`${destination}.partial`)]).toEqual([false, false]);
  });

  it('lets the source go when the worker fails before reading it all (a file it cannot write)', async () => {
    // Endless: only the failure can end this pack.
    const source = Readable.from((function* endless() {
      for (;;) yield Buffer.alloc(1024 * 1024, 1);
    })());
    await expect(packArchive(source, join(dir, 'no such folder', 'backup.tar.zst'))).rejects.toThrow(/ENOENT/);
    expect(source.destroyed).toBe(true);
  });
});
