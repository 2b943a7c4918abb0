// The data directory holds the database (signing keys, password hashes), the secrets key,
// customers' backups and caught emails with password-reset links: it is the running user's
// alone. Commands refuse a directory other users can write (they could have replaced any of
// it), create it owner-only, and `serve` and `admin` tighten what an earlier version left readable.
// Parent directories are not checked: a world-writable one such as /tmp has the sticky bit.
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Why a command will not use the data directory, with the command that fixes it. */
export class DataDirRefusal extends Error {}

const WRITABLE_BY_OTHERS = 0o022;
const GROUP_AND_OTHERS = 0o077;

export function secureDataDir(dataDir: string, options: { tighten: boolean }): void {
  // POSIX permissions only: on Windows, access is governed by ACLs that these bits do not show.
  if (process.platform === 'win32') return;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dir = resolve(dataDir);
  const stat = statSync(dir);
  if (!stat.isDirectory()) throw new DataDirRefusal(`The data directory ${dir} is not a directory.`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new DataDirRefusal(`The data directory ${dir} belongs to user ${stat.uid}, not to the user running teaminfra (${uid}), ` +
      `so that user can read and replace everything in it. Run teaminfra as its owner, or fix it with: chown -R ${uid} ${dir} && chmod 700 ${dir}`);
  }
  if ((stat.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw new DataDirRefusal(`The data directory ${dir} can be written by other users (mode ${(stat.mode & 0o777).toString(8)}), ` +
      `who could have replaced the database or the services' files, so teaminfra will not use it. Check its contents, then fix it with: chmod 700 ${dir}`);
  }
  if (options.tighten) tighten(dir);
}

/** Removes group and other permissions from the directory and everything under it; symbolic links are left alone. */
function tighten(path: string): void {
  const stat = unlessGone(() => lstatSync(path));
  if (!stat || stat.isSymbolicLink()) return;
  if ((stat.mode & GROUP_AND_OTHERS) !== 0) unlessGone(() => chmodSync(path, stat.mode & 0o700));
  if (!stat.isDirectory()) return;
  for (const name of unlessGone(() => readdirSync(path)) ?? []) tighten(join(path, name));
}

/** Running ERP services create and delete files (logs, journals) while the walk goes on: a file gone is skipped. */
function unlessGone<T>(action: () => T): T | undefined {
  try {
    return action();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
