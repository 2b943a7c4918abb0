// Before a scratch root is removed: whatever is still mounted under it (debootstrap mounts
// /proc and /sys in its target and can leave them mounted when it fails) is unmounted first,
// so removing the scratch directory can never walk into the machine's /proc or /sys.
import { readFileSync } from 'node:fs';
import { runProgram } from './run-program.js';

export async function unmountUnder(dir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) await runProgram(['umount', '--lazy', point], { timeoutMs: 30_000, what: `unmount ${point}` });
}
