// Scratch roots and half-written tarballs are named after the build process that made them
// (`image-<pid>-...`, `...tar.<pid>.partial`): a build that was killed leaves them behind, and
// the next build removes those whose process no longer runs (never another live build's).
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { unmountUnder } from './unmount-under.js';

export function scratchPrefix(kind: 'image' | 'debootstrap'): string {
  return `${kind}-${process.pid}-`;
}

export function partialPath(file: string): string {
  return `${file}.${process.pid}.partial`;
}

export async function removeStaleScratch(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (const name of readdirSync(dir)) {
      const pid = Number((/^(?:image|debootstrap)-(\d+)-/.exec(name) ?? /\.(\d+)\.partial$/.exec(name))?.[1]);
      if (!pid || isRunning(pid)) continue;
      await unmountUnder(join(dir, name));
      rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
