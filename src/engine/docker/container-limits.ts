// How much memory and CPU each ERP container of a server may use: the server's own setting
// (admin set-server-limits), else the operator's default. Without a limit, one service that
// leaks or loops takes the memory and the cores of every other service on its engine.
import type { ContainerLimitsSetting } from '../driver.js';

export const DEFAULT_MEMORY_MB = 2048;
export const DEFAULT_CPUS = 2;

/** The bounds a setting must stay within: below, no ERP starts; above, it is not a limit. */
export const MEMORY_MB_RANGE = { min: 128, max: 1_048_576 } as const;
export const CPUS_RANGE = { min: 0.1, max: 256 } as const;

export interface ContainerLimits {
  /** HostConfig.Memory, in bytes; swap is not added on top (MemorySwap equals it). */
  memoryBytes: number;
  /** HostConfig.NanoCpus: 1e9 is one core. */
  nanoCpus: number;
}

export function containerLimitsOf(setting: ContainerLimitsSetting | undefined, env: NodeJS.ProcessEnv = process.env): ContainerLimits {
  const memoryMb = setting?.memoryMb ?? defaultOf(env.TEAMINFRA_CONTAINER_MEMORY_MB, DEFAULT_MEMORY_MB, MEMORY_MB_RANGE);
  const cpus = setting?.cpuMillicores ? setting.cpuMillicores / 1000 : defaultOf(env.TEAMINFRA_CONTAINER_CPUS, DEFAULT_CPUS, CPUS_RANGE);
  return { memoryBytes: memoryMb * 1024 * 1024, nanoCpus: Math.round(cpus * 1e9) };
}

function defaultOf(text: string | undefined, fallback: number, range: { min: number; max: number }): number {
  const value = Number(text);
  return text !== undefined && text !== '' && Number.isFinite(value) && value >= range.min && value <= range.max ? value : fallback;
}
