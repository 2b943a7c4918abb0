// A local service's use of the machine, from Linux's /proc: the process's CPU time and start
// (/proc/PID/stat, in clock ticks of 1/100 s, Linux's USER_HZ everywhere), its resident memory
// (VmRSS in /proc/PID/status), and its directory's size on disk except its log. The local
// driver never restarts a process by itself, so `restarts` is 0; its memory has no limit of its
// own, so the limit is the machine's.
import { readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { ServiceMetrics } from '../../core/service-observer.js';
import { LOG_FILE, readRuntime } from '../erp-app/config.js';
import { isAlive, runsWithArgument } from '../local/process-control.js';
import type { CpuWindows } from './cpu-window.js';

const TICKS_PER_SECOND = 100;

export async function localMetrics(serviceDir: string, cpu: CpuWindows): Promise<ServiceMetrics> {
  const data_bytes = await sizeOnDisk(serviceDir);
  const pid = readRuntime(serviceDir)?.pid;
  const stat = pid !== undefined && isAlive(pid) && runsWithArgument(pid, serviceDir) !== false ? processStat(pid) : null;
  if (pid === undefined || !stat) {
    return { running: false, started_at: null, uptime_seconds: null, restarts: null, cpu: null, memory_bytes: null, memory_limit_bytes: null, data_bytes };
  }
  const startedAt = bootTimeMs() + (stat.startTicks / TICKS_PER_SECOND) * 1000;
  const usage = await cpu.percentOf(`local:${pid}:${stat.startTicks}`, async () => {
    const now = processStat(pid);
    return now && now.startTicks === stat.startTicks ? { at: Date.now(), usedNs: (now.cpuTicks / TICKS_PER_SECOND) * 1e9 } : null;
  });
  return {
    running: true,
    started_at: new Date(startedAt).toISOString(),
    uptime_seconds: Math.max(0, Math.round((Date.now() - startedAt) / 1000)),
    restarts: 0,
    cpu: usage,
    memory_bytes: residentBytes(pid),
    memory_limit_bytes: totalmem(),
    data_bytes,
  };
}

/** utime + stime and the start, in ticks; null when the process is gone. */
function processStat(pid: number): { cpuTicks: number; startTicks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces): state is field 3.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { cpuTicks: Number(fields[11]) + Number(fields[12]), startTicks: Number(fields[19]) };
  } catch {
    return null;
  }
}

function residentBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function bootTimeMs(): number {
  const match = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
  return Number(match?.[1] ?? 0) * 1000;
}

/** Bytes the directory's files take on disk (blocks, not lengths: a sparse file counts what it holds); the log is not data. */
async function sizeOnDisk(dir: string): Promise<number | null> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return null;
  }
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile() || (entry.parentPath === dir && entry.name === LOG_FILE)) continue;
    const stats = await lstat(join(entry.parentPath, entry.name)).catch(() => null);
    total += stats ? stats.blocks * 512 : 0;
  }
  return total;
}
