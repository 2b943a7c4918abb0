// The Debian bookworm root every offline image starts from: `debootstrap --variant=minbase`
// from Debian's mirror (the one network access the build needs; no image registry), kept as a
// tarball in the machine's cache so the next build unpacks it in seconds. Downloaded packages
// are kept in the cache too, so a rebuild fetches nothing it already has.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram } from './run-program.js';
import { partialPath, scratchPrefix } from './stale-scratch.js';
import { unmountUnder } from './unmount-under.js';

export const DEBIAN_SUITE = 'bookworm';
export const DEBIAN_MIRROR = process.env.TEAMINFRA_DEBIAN_MIRROR || 'http://deb.debian.org/debian';

/** TEAMINFRA_IMAGE_CACHE, or /var/cache/teaminfra: kept between builds (and between CI runs where the machine keeps it). */
export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEAMINFRA_IMAGE_CACHE || '/var/cache/teaminfra';
}

export interface CacheDirs {
  root: string;
  /** .deb files, shared by debootstrap (--cache-dir) and apt-get in the chroots. */
  debs: string;
  /** Scratch roots being built; each build its own, removed after. */
  work: string;
  /** Finished images as tarballs, named by content tag. */
  images: string;
}

export function cacheDirs(root = imageCacheDir()): CacheDirs {
  const dirs = { root, debs: join(root, 'debs'), work: join(root, 'work'), images: join(root, 'images') };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o755 });
  return dirs;
}

/** The cached base root's tarball, made now if missing. */
export async function baseRootTarball(dirs: CacheDirs, log: (line: string) => void): Promise<string> {
  const tarball = join(dirs.root, `${DEBIAN_SUITE}-minbase.tar`);
  if (existsSync(tarball)) return tarball;
  const work = mkdtempSync(join(dirs.work, scratchPrefix('debootstrap')));
  const partial = partialPath(tarball);
  try {
    const root = join(work, 'root');
    log(`debootstrap --variant=minbase ${DEBIAN_SUITE} from ${DEBIAN_MIRROR} (about a minute, once per machine)`);
    await runProgram(['debootstrap', '--variant=minbase', `--cache-dir=${dirs.debs}`, DEBIAN_SUITE, root, DEBIAN_MIRROR],
      { timeoutMs: 20 * 60_000, what: `make a Debian ${DEBIAN_SUITE} root from ${DEBIAN_MIRROR}` });
    await runProgram(['tar', '-C', root, '--numeric-owner', '-cf', partial, '.'], { timeoutMs: 10 * 60_000, what: 'pack the Debian root' });
    // Complete or absent: a build interrupted before this rename leaves no half tarball behind.
    renameSync(partial, tarball);
    return tarball;
  } finally {
    await unmountUnder(work);
    rmSync(work, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }
}
