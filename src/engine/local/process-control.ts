// Finding and ending processes by id. A recorded pid may since have been reused by an unrelated
// program, so nothing here kills a pid without the caller having recognised it first.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // An exited child that nobody has reaped yet still answers signal 0.
  return processStateLetter(pid) !== 'Z';
}

/** The process's arguments (Linux /proc); null where that cannot be read. */
export function commandLineOf(pid: number): string[] | null {
  if (process.platform !== 'linux') return null;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((part) => part.length > 0);
  } catch {
    return null;
  }
}

/** Whether `pid` runs with `argument` on its command line: true, false, or null (cannot tell). */
export function runsWithArgument(pid: number, argument: string): boolean | null {
  const commandLine = commandLineOf(pid);
  if (commandLine === null) return process.platform === 'linux' ? false : null;
  return commandLine.includes(argument);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function terminate(pid: number, graceMs: number): Promise<void> {
  if (!signal(pid, 'SIGTERM')) return;
  if (await exited(pid, graceMs)) return;
  signal(pid, 'SIGKILL');
  if (!(await exited(pid, 5000))) throw new Error(`process ${pid} did not end after SIGKILL`);
}

export async function exited(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (let wait = 5; isAlive(pid); wait = Math.min(wait * 2, 50)) {
    if (Date.now() >= deadline) return false;
    await sleep(wait);
  }
  return true;
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

function processStateLetter(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may contain spaces; the state follows the last ")".
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}
