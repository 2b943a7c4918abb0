// Runs one program (an argument array, no shell) to its end within a deadline, keeping the tail
// of its output for the sentence a failure becomes. The image builds run debootstrap, chroot,
// apt-get and tar this way; a hung mirror must end the build, not hold it forever.
import { spawn } from 'node:child_process';

export class ProgramError extends Error {}

export async function runProgram(argv: readonly string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; what: string }): Promise<void> {
  const [program, ...args] = argv as [string, ...string[]];
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env, detached: true });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-2_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // The whole group: apt-get's and dpkg's children too.
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }, options.timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  }).catch((error: Error) => {
    throw new ProgramError(`Cannot run ${program} to ${options.what}: ${error.message}.`);
  }).finally(() => clearTimeout(timer));
  if (timedOut) throw new ProgramError(`${program} did not finish in ${Math.round(options.timeoutMs / 1000)} s while trying to ${options.what}; it was stopped.`);
  if (code !== 0) {
    const last = tail.trim().split('\n').slice(-6).join(' | ');
    throw new ProgramError(`${program} failed (exit ${code}) while trying to ${options.what}: ${last}`);
  }
}
