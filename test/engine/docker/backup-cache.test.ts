// This node's bounded cache of copies of backups kept on Docker engines, on a real directory:
// copies kept within the bound (the oldest used let go first), never one in use, one let go once
// it has served, one larger than the bound used from the spool and removed; and the operator's
// setting read with a sentence for a bad value, at `serve`'s start.
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BackupCache, backupCacheBytesFromEnv, DEFAULT_BACKUP_CACHE_MB } from '../../../src/engine/docker/backup-cache.js';
import { runCli } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { nodeCopiesBytes } from './support/node-backup-copies.js';

const KB = 1024;

describe('BackupCache', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function cacheOf(maxBytes: number): BackupCache {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    return new BackupCache(dataDir, maxBytes);
  }
  /** A whole backup of `bytes` in the spool, as a backup or a fetch leaves it, kept by the cache. */
  function written(cache: BackupCache, name: string, bytes: number, usedAt?: number) {
    const spooled = cache.spoolPathOf(name.split('/')[1] as string);
    writeFileSync(spooled, Buffer.alloc(bytes, 1));
    const held = cache.keep(spooled, name);
    if (usedAt !== undefined && held.path === cache.pathOf(name)) utimesSync(held.path, usedAt / 1000, usedAt / 1000);
    return held;
  }
  const spoolEntries = (cache: BackupCache) => (existsSync(join(cache.dataDir, 'backup-spool')) ? readdirSync(join(cache.dataDir, 'backup-spool')) : []);

  it('keeps copies within its bound, letting the least recently used go first', async () => {
    const cache = cacheOf(100 * KB);
    written(cache, 'svc_a/bak_1.tar.zst', 40 * KB, 1_000_000).release();
    written(cache, 'svc_a/bak_2.tar.zst', 40 * KB, 2_000_000).release();
    // bak_1 used again: bak_2 is now the least recently used.
    const used = await cache.cached('svc_a/bak_1.tar.zst', async () => true);
    used?.release();
    written(cache, 'svc_b/bak_3.tar.zst', 40 * KB).release();
    expect([1, 2].map((n) => existsSync(cache.pathOf(`svc_a/bak_${n}.tar.zst`)))).toEqual([true, false]);
    expect(existsSync(cache.pathOf('svc_b/bak_3.tar.zst'))).toBe(true);
    expect(nodeCopiesBytes(cache.dataDir)).toBe(80 * KB);
    expect(spoolEntries(cache)).toEqual([]);
  });

  it('never lets a copy in use go to make room; the new one is then used from the spool and removed once released', () => {
    const cache = cacheOf(100 * KB);
    const reading = written(cache, 'svc_a/bak_1.tar.zst', 60 * KB);
    const large = written(cache, 'svc_a/bak_2.tar.zst', 60 * KB);
    expect(existsSync(reading.path)).toBe(true);
    expect(large.path).not.toBe(cache.pathOf('svc_a/bak_2.tar.zst'));
    expect(existsSync(large.path)).toBe(true);
    large.release();
    expect(existsSync(large.path)).toBe(false);
    expect(spoolEntries(cache)).toEqual([]);
    expect(nodeCopiesBytes(cache.dataDir)).toBe(60 * KB);
  });

  it('lets a copy go once it has served, but only when its last reader is done', async () => {
    const cache = cacheOf(100 * KB);
    const first = written(cache, 'svc_a/bak_1.tar.zst', 10 * KB);
    const second = await cache.cached('svc_a/bak_1.tar.zst', async () => true);
    first.release(true);
    expect(existsSync(cache.pathOf('svc_a/bak_1.tar.zst'))).toBe(true);
    second?.release();
    expect(existsSync(cache.pathOf('svc_a/bak_1.tar.zst'))).toBe(false);
  });

  it('removes a copy that fails its check, so that it is fetched again', async () => {
    const cache = cacheOf(100 * KB);
    written(cache, 'svc_a/bak_1.tar.zst', 10 * KB).release();
    expect(await cache.cached('svc_a/bak_1.tar.zst', async () => false)).toBeUndefined();
    expect(existsSync(cache.pathOf('svc_a/bak_1.tar.zst'))).toBe(false);
  });

  it('keeps nothing beyond its use with a bound of 0, and never counts or removes the local driver\'s own backups', () => {
    const cache = cacheOf(0);
    mkdirSync(join(cache.dataDir, 'backups', 'svc_local'), { recursive: true });
    writeFileSync(join(cache.dataDir, 'backups', 'svc_local', 'bak_9.sqlite.zst'), Buffer.alloc(10 * KB));
    const held = written(cache, 'svc_a/bak_1.tar.zst', 10 * KB);
    expect(existsSync(held.path)).toBe(true);
    held.release();
    expect(nodeCopiesBytes(cache.dataDir)).toBe(0);
    expect(existsSync(join(cache.dataDir, 'backups', 'svc_local', 'bak_9.sqlite.zst'))).toBe(true);
  });
});

describe('TEAMINFRA_BACKUP_CACHE_MB', () => {
  it('is a number of megabytes, with a default when unset', () => {
    expect(backupCacheBytesFromEnv({})).toBe(DEFAULT_BACKUP_CACHE_MB * 1024 * 1024);
    expect(backupCacheBytesFromEnv({ TEAMINFRA_BACKUP_CACHE_MB: '0' })).toBe(0);
    expect(backupCacheBytesFromEnv({ TEAMINFRA_BACKUP_CACHE_MB: '300' })).toBe(300 * 1024 * 1024);
  });

  it('stops serve with a sentence naming it when it is not a whole number of megabytes', async () => {
    const dataDir = tempDataDir();
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { env: { TEAMINFRA_BACKUP_CACHE_MB: '1.5GB', TEAMINFRA_SMTP_PORT: '0' } });
    rmSync(dataDir, { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TEAMINFRA_BACKUP_CACHE_MB must be a whole number of megabytes, 0 or more; got "1.5GB".');
  });
});
