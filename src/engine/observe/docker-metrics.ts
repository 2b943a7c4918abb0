// A Docker service's use of the machine, from its engine: each running container's state
// (inspect: start, restarts by the engine since), its CPU time and memory (the stats API, one
// reading at a time: `one-shot`), and the size of the volumes it keeps its data in (the engine's
// disk-usage report, kept for a little while: it sizes every volume of the engine at once).
// An app's several containers are added up: CPU and memory together, the earliest start, every
// restart; their memory limit is the sum of theirs, or the machine's when one has none.
import type { ServiceMetrics } from '../../core/service-observer.js';
import type { DockerApi } from '../docker/docker-api.js';
import { listAppContainers } from '../docker/app-containers.js';
import { LABEL } from '../docker/labels.js';
import type { CpuWindows } from './cpu-window.js';

/** How long one disk-usage report of an engine answers for its volumes' sizes. */
const DISK_USAGE_TTL_MS = 30_000;

interface Inspected {
  State: { Running: boolean; StartedAt: string };
  RestartCount: number;
  HostConfig: { Memory: number };
  Mounts: { Type: string; Name?: string }[];
}

interface Stats {
  read: string;
  cpu_stats: { cpu_usage: { total_usage: number } };
  memory_stats: { usage?: number; limit?: number; stats?: Record<string, number> };
}

interface DiskUsage {
  Volumes: { Name: string; Labels: Record<string, string> | null; UsageData: { Size: number } | null }[] | null;
}

export class DockerMetrics {
  private readonly diskUsage = new WeakMap<DockerApi, { at: number; report: Promise<DiskUsage> }>();

  constructor(private readonly cpu: CpuWindows) {}

  async of(api: DockerApi, serviceId: string): Promise<ServiceMetrics> {
    const containers = await listAppContainers(api, serviceId);
    const inspected = await Promise.all(containers.map(async (container) => ({
      id: container.id, ...(await api.json<Inspected>('GET', `/containers/${container.id}/json`)),
    })));
    const data_bytes = await this.dataBytes(api, serviceId, inspected.flatMap((each) => each.Mounts.filter((mount) => mount.Type === 'volume').map((mount) => mount.Name ?? '')));
    const running = inspected.filter((each) => each.State.Running);
    if (running.length === 0) {
      return { running: false, started_at: null, uptime_seconds: null, restarts: null, cpu: null, memory_bytes: null, memory_limit_bytes: null, data_bytes };
    }
    const measured = await Promise.all(running.map(async (each) => {
      let memory: Stats['memory_stats'] = {};
      const cpu = await this.cpu.percentOf(`docker:${each.id}:${each.State.StartedAt}`, async () => {
        const stats = await api.json<Stats>('GET', `/containers/${each.id}/stats`, { query: { stream: false, 'one-shot': true } });
        memory = stats.memory_stats;
        const at = Date.parse(stats.read);
        return Number.isNaN(at) || !stats.cpu_stats?.cpu_usage ? null : { at, usedNs: stats.cpu_stats.cpu_usage.total_usage };
      });
      return { cpu, memory: memoryInUse(memory), limit: each.HostConfig.Memory > 0 ? each.HostConfig.Memory : null, machine: memory.limit ?? null };
    }));
    const startedAt = Math.min(...running.map((each) => Date.parse(each.State.StartedAt)));
    const cpus = measured.map((each) => each.cpu);
    const unlimited = measured.some((each) => each.limit === null);
    return {
      running: true,
      started_at: new Date(startedAt).toISOString(),
      uptime_seconds: Math.max(0, Math.round((Date.now() - startedAt) / 1000)),
      restarts: running.reduce((sum, each) => sum + each.RestartCount, 0),
      cpu: cpus.every((each) => each !== null) ? {
        percent: Math.round(cpus.reduce((sum, each) => sum + (each?.percent ?? 0), 0) * 10) / 10,
        window_seconds: Math.min(...cpus.map((each) => each?.window_seconds ?? 0)),
      } : null,
      memory_bytes: measured.reduce((sum, each) => sum + (each.memory ?? 0), 0),
      memory_limit_bytes: unlimited ? Math.max(...measured.map((each) => each.machine ?? 0)) || null : measured.reduce((sum, each) => sum + (each.limit ?? 0), 0),
      data_bytes,
    };
  }

  /** The volumes its containers mount, or, with none, every data volume of the service. */
  private async dataBytes(api: DockerApi, serviceId: string, mounted: string[], fresh = false): Promise<number | null> {
    const volumes = (await this.diskUsageOf(api)).Volumes ?? [];
    const ours = volumes.filter((volume) => volume.Labels?.[LABEL.serviceId] === serviceId && volume.Labels?.[LABEL.role] === 'data');
    const used = mounted.length > 0 ? ours.filter((volume) => mounted.includes(volume.Name)) : ours;
    // A volume made since the report was kept: the engine is asked again, once.
    if (!fresh && ours.length === 0) {
      this.diskUsage.delete(api);
      return this.dataBytes(api, serviceId, mounted, true);
    }
    const sizes = used.map((volume) => volume.UsageData?.Size ?? -1).filter((size) => size >= 0);
    return sizes.length === 0 ? null : sizes.reduce((sum, size) => sum + size, 0);
  }

  private diskUsageOf(api: DockerApi): Promise<DiskUsage> {
    const cached = this.diskUsage.get(api);
    if (cached && Date.now() - cached.at < DISK_USAGE_TTL_MS) return cached.report;
    const report = api.json<DiskUsage>('GET', '/system/df');
    this.diskUsage.set(api, { at: Date.now(), report });
    report.catch(() => this.diskUsage.delete(api));
    return report;
  }
}

/** What `docker stats` shows as used: the usage less the page cache the kernel can drop (cgroup v2 inactive_file, v1 total_inactive_file). */
function memoryInUse(memory: Stats['memory_stats']): number | null {
  if (memory.usage === undefined) return null;
  const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? 0;
  return Math.max(0, memory.usage - cache);
}
