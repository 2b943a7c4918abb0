// The local driver's backup files, run in process: a packed database (zstd) unpacks to the same
// rows with the checksum it was given, a backup taken before zstd (gzip) still does, and every way
// an archive can be bad is refused with a sentence before anything relies on it.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { openErpDatabase } from '../../../src/engine/erp-app/database.js';
import { packDatabase, unpackVerified } from '../../../src/engine/local/backup-archive.js';
import { ArchiveProblem } from '../../../src/engine/local/database-snapshot.js';
import { tempDataDir } from '../../support/fixtures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** What `sql` reads from the database file `file`. */
function readAll(file: string, sql: string): unknown[] {
  const db = new SQLite(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('backup archives', () => {
  const dir = tempDataDir();
  const source = join(dir, 'erp.sqlite');
  const archive = join(dir, 'backup.sqlite.zst');
  let packed: { sizeBytes: number; sha256: string };

  beforeAll(async () => {
    const db = openErpDatabase(source);
    // Over 8 MiB: several of the 4 MiB pieces zstd is handed, and several of its jobs.
    const insert = db.prepare('INSERT INTO customers (name, email, city) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let index = 0; index < 200_000; index++) insert.run(`Customer ${index} ${Math.random()}`, `c${index}@example.com`, 'Ghent');
    })();
    db.close();
    packed = await packDatabase(source, archive);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function problemOf(file: string, checksum: string): Promise<string> {
    const outcome = await unpackVerified(file, checksum, join(dir, 'unpacked.sqlite')).then(() => 'accepted', (error: unknown) => error);
    rmSync(join(dir, 'unpacked.sqlite'), { force: true });
    expect(outcome).toBeInstanceOf(ArchiveProblem);
    return (outcome as ArchiveProblem).message;
  }

  /** Writes `bytes` zstd-compressed and returns the archive's path and checksum. */
  function archiveOf(name: string, bytes: Buffer): { file: string; checksum: string } {
    const file = join(dir, name);
    writeFileSync(file, zstdCompress(bytes));
    return { file, checksum: sha256(readFileSync(file)) };
  }

  it('reports the size and SHA-256 of the file it wrote, a zstd file that any zstd reads back to the whole database', () => {
    const bytes = readFileSync(archive);
    expect(packed).toEqual({ sizeBytes: bytes.length, sha256: sha256(bytes) });
    expect(statSync(source).size).toBeGreaterThan(8 * 1024 * 1024);
    expect(bytes.length).toBeLessThan(statSync(source).size);
    const database = zstdDecompress(bytes);
    expect(database.length).toBe(statSync(source).size);
    expect(database.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
  });

  it('unpacks to a database with the same rows', async () => {
    const target = join(dir, 'restored.sqlite');
    await unpackVerified(archive, packed.sha256, target);
    const count = (file: string) => readAll(file, 'SELECT count(*) AS count, sum(length(name)) AS size FROM customers');
    expect(count(target)).toEqual(count(source));
  });

  it('packs a database too large to snapshot in memory through a snapshot file, to the same rows', async () => {
    const throughFile = join(dir, 'through-file.sqlite.zst');
    const packedThroughFile = await packDatabase(source, throughFile, 0);
    expect(packedThroughFile).toEqual({ sizeBytes: statSync(throughFile).size, sha256: sha256(readFileSync(throughFile)) });
    const target = join(dir, 'restored-through-file.sqlite');
    await unpackVerified(throughFile, packedThroughFile.sha256, target);
    const rows = (file: string) => readAll(file, 'SELECT id, name, email FROM customers ORDER BY id');
    expect(rows(target)).toEqual(rows(source));
  });

  it('refuses a file that does not match its checksum', async () => {
    const changed = join(dir, 'changed.sqlite.zst');
    const bytes = readFileSync(archive);
    const middle = bytes.length >> 1;
    bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
    writeFileSync(changed, bytes);
    expect(await problemOf(changed, packed.sha256)).toBe(
      `The backup file does not match its SHA-256 checksum (expected ${packed.sha256}, found ${sha256(bytes)}): it was changed or ` +
        'damaged after it was taken.');
  });

  it('refuses a truncated zstd file even when its checksum was recorded truncated', async () => {
    const truncated = join(dir, 'truncated.sqlite.zst');
    const bytes = readFileSync(archive).subarray(0, 100_000);
    writeFileSync(truncated, bytes);
    expect(await problemOf(truncated, sha256(bytes))).toBe(
      'The backup file is not a complete zstd file (Stream ended in middle of compressed data frame).');
  });

  it('refuses a zstd file damaged inside, by its frame checksum, even when its SHA-256 was recorded damaged', async () => {
    const damaged = join(dir, 'damaged-frame.sqlite.zst');
    const bytes = Buffer.from(readFileSync(archive));
    for (let at = 50_000; at < bytes.length - 1000; at += 400_000) bytes.writeUInt8(bytes.readUInt8(at) ^ 0x55, at);
    writeFileSync(damaged, bytes);
    expect(await problemOf(damaged, sha256(bytes))).toMatch(/^The backup file is not a complete zstd file \(.+\)\.$/);
  });

  it('refuses a file that is neither zstd nor gzip', async () => {
    const plain = join(dir, 'plain.sqlite');
    writeFileSync(plain, readFileSync(source));
    expect(await problemOf(plain, sha256(readFileSync(plain)))).toBe(
      'The backup file is neither zstd- nor gzip-compressed, so it is not a backup teaminfra took.');
  });

  describe('a backup taken before zstd (gzip)', () => {
    it('unpacks to the same rows', async () => {
      const old = join(dir, 'old.sqlite.gz');
      writeFileSync(old, gzipSync(readFileSync(source), { level: 1 }));
      const target = join(dir, 'restored-old.sqlite');
      await unpackVerified(old, sha256(readFileSync(old)), target);
      expect(readFileSync(target).equals(readFileSync(source))).toBe(true);
    });

    it('is refused truncated with the gzip reason', async () => {
      const truncated = join(dir, 'truncated-old.sqlite.gz');
      const bytes = gzipSync(readFileSync(source), { level: 1 }).subarray(0, 100_000);
      writeFileSync(truncated, bytes);
      expect(await problemOf(truncated, sha256(bytes))).toBe('The backup file is not a complete gzip file (unexpected end of file).');
    });
  });

  it('refuses a database that fails SQLite\'s integrity check', async () => {
    const damaged = join(dir, 'damaged.sqlite');
    writeFileSync(damaged, readFileSync(source));
    // Scribbles over pages in the middle of the customers table.
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.alloc(4096 * 3, 0x5a), 0, 4096 * 3, 4096 * 40 + 100);
    closeSync(fd);
    const { file, checksum } = archiveOf('damaged.sqlite.zst', readFileSync(damaged));
    expect(await problemOf(file, checksum)).toMatch(
      /^The backup(?:'s database failed SQLite's integrity check: .+| does not hold a sound SQLite database \(.+\))\.$/);
  });

  it('refuses a file that is not a database, and a database that is not an ERP database', async () => {
    const garbage = archiveOf('garbage.sqlite.zst', Buffer.from('not a database at all, just text '.repeat(200)));
    expect(await problemOf(garbage.file, garbage.checksum)).toBe(
      'The backup does not hold a sound SQLite database (file is not a database).');
    const otherPath = join(dir, 'other.sqlite');
    const other = new SQLite(otherPath);
    other.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    other.close();
    const foreign = archiveOf('other.sqlite.zst', readFileSync(otherPath));
    expect(await problemOf(foreign.file, foreign.checksum)).toBe(
      'The backup does not hold an ERP database: it has no users, customers, products, sales_orders table.');
  });

  it('refuses a backup whose file is gone', async () => {
    expect(await problemOf(join(dir, 'missing.sqlite.zst'), packed.sha256)).toBe('The backup file is missing from the server.');
  });
});
