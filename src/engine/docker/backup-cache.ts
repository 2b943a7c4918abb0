// This node's copies of the backups kept on Docker engines (backup-store.ts): a cache, bounded
// by the operator (TEAMINFRA_BACKUP_CACHE_MB), since the engine's backups volume already keeps
// every backup and a node fetches any it lacks from there. A copy is kept at
// DATA_DIR/backups/SERVICE/FILE (a .tar.zst, or a .tar.gz of an earlier version: the local
// driver's own backups there are .sqlite files, never part of the cache), and goes:
// - after it was downloaded whole or restored (the next one fetches it again);
// - oldest used first, whenever a new copy needs room within the bound;
// - with its backup, when retention removes it (backup-retention.ts).
// A copy in use (being read by a download or a restore) is never removed from under it. A
// backup being written, or fetched from the engine, is in DATA_DIR/backup-spool until it is
// whole; one larger than the bound is used from there and removed once used.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The bound when the operator sets none: a few backups of a mid-sized database. */
export const DEFAULT_BACKUP_CACHE_MB = 1024;

const MB = 1024 * 1024;

/** A file a caller reads from until it calls release; `evict`: it was used as meant (downloaded whole, restored), so it goes. */
export interface HeldBackupFile {
  path: string;
  release(evict?: boolean): void;
}

/** TEAMINFRA_BACKUP_CACHE_MB as bytes: a whole number of MB, 0 (no copy kept beyond its use) or more. */
export function backupCacheBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.TEAMINFRA_BACKUP_CACHE_MB;
  if (text === undefined || text === '') return DEFAULT_BACKUP_CACHE_MB * MB;
  if (!/^\d+$/.test(text) || Number(text) > 16 * 1024 * 1024) {
    throw new Error(`TEAMINFRA_BACKUP_CACHE_MB must be a whole number of megabytes, 0 or more; got "${text}".`);
  }
  return Number(text) * MB;
}

const CACHED_NAME = /\.tar\.(zst|gz)$/;

export class BackupCache {
  private readonly users = new Map<string, number>();
  private readonly evictWhenUnused = new Set<string>();

  constructor(readonly dataDir: string, readonly maxBytes: number) {}

  /** Where this node keeps its copy of the engine's backup `name` (SERVICE/FILE). */
  pathOf(name: string): string {
    return join(this.dataDir, 'backups', name);
  }

  /** A new file in the spool named `fileName` (the name the engine keeps it under), in a folder of its own. */
  spoolPathOf(fileName: string): string {
    const folder = join(this.dataDir, 'backup-spool', randomBytes(6).toString('hex'));
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    return join(folder, fileName);
  }

  /** Removes a file spoolPathOf gave, with its folder. */
  dropSpooled(path: string): void {
    rmSync(dirname(path), { recursive: true, force: true });
  }

  /** The cached copy of `name`, held, when there is one; `valid` checks it (a damaged copy is removed). */
  async cached(name: string, valid: (path: string) => Promise<boolean>): Promise<HeldBackupFile | undefined> {
    const path = this.pathOf(name);
    const held = this.hold(path);
    if (existsSync(path) && await valid(path)) {
      const now = new Date();
      utimesSync(path, now, now);
      return held;
    }
    held.release();
    if (!this.users.has(path)) rmSync(path, { force: true });
    return undefined;
  }

  /**
   * A whole spool file made the cached copy of `name` when it fits within the bound (older
   * copies not in use removed to make room), and held; else held where it is, removed on release.
   */
  keep(spooled: string, name: string): HeldBackupFile {
    const path = this.pathOf(name);
    const size = statSync(spooled).size;
    if (size <= this.maxBytes && this.makeRoom(size, path)) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      renameSync(spooled, path);
      this.dropSpooled(spooled);
      return this.hold(path);
    }
    return { path: spooled, release: () => this.dropSpooled(spooled) };
  }

  /** Removes what a crashed process left in the spool; at the engine's start, before any backup runs. */
  clearSpool(): void {
    rmSync(join(this.dataDir, 'backup-spool'), { recursive: true, force: true });
  }

  private hold(path: string): HeldBackupFile {
    this.users.set(path, (this.users.get(path) ?? 0) + 1);
    let released = false;
    return {
      path,
      release: (evict = false) => {
        if (released) return;
        released = true;
        if (evict) this.evictWhenUnused.add(path);
        const left = (this.users.get(path) ?? 1) - 1;
        if (left > 0) {
          this.users.set(path, left);
          return;
        }
        this.users.delete(path);
        if (this.evictWhenUnused.delete(path)) rmSync(path, { force: true });
      },
    };
  }

  /** Removes copies not in use, oldest used first, until `size` more bytes fit (replacing `path`); false if they cannot. */
  private makeRoom(size: number, path: string): boolean {
    const copies = this.copies().filter((copy) => copy.path !== path);
    let total = copies.reduce((sum, copy) => sum + copy.size, 0);
    for (const copy of copies.sort((a, b) => a.usedAt - b.usedAt)) {
      if (total + size <= this.maxBytes) break;
      if (this.users.has(copy.path)) continue;
      rmSync(copy.path, { force: true });
      total -= copy.size;
    }
    return total + size <= this.maxBytes;
  }

  private copies(): { path: string; size: number; usedAt: number }[] {
    const root = join(this.dataDir, 'backups');
    const found: { path: string; size: number; usedAt: number }[] = [];
    for (const folder of entriesOf(root)) {
      for (const file of entriesOf(join(root, folder)).filter((name) => CACHED_NAME.test(name))) {
        const path = join(root, folder, file);
        try {
          const stat = statSync(path);
          found.push({ path, size: stat.size, usedAt: stat.mtimeMs });
        } catch {
          // Removed meanwhile (retention).
        }
      }
    }
    return found;
  }
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const caches = new Map<string, BackupCache>();

/**
 * The cache of the node whose data directory is `dataDir`: one per directory in a process, so
 * that a download and a restore see each other's copies in use. The engine opens it with the
 * operator's bound (openBackupCache); anything else gets it with the environment's.
 */
export function backupCacheOf(dataDir: string): BackupCache {
  const key = resolve(dataDir);
  let cache = caches.get(key);
  if (!cache) {
    cache = new BackupCache(key, backupCacheBytesFromEnv());
    caches.set(key, cache);
  }
  return cache;
}

export function openBackupCache(dataDir: string, maxBytes: number): BackupCache {
  const cache = new BackupCache(resolve(dataDir), maxBytes);
  caches.set(cache.dataDir, cache);
  return cache;
}
