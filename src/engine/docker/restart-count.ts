// How many times the engine restarted a service's containers (its restart policy brings a
// container that exits back, so a container that crashes in a loop still looks "running"): the
// sum of RestartCount over the service's own containers, found by our labels. The health watcher
// reads it on every pass and counts the increases (src/health/crash-loops.ts).
import type { DockerApi } from './docker-api.js';
import { LABEL, labelFilter } from './labels.js';

export async function restartCountOf(api: DockerApi, serviceId: string): Promise<number> {
  const listed = await api.json<{ Id: string }[]>('GET', '/containers/json', {
    query: { all: 1, filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: 'service' }) },
  });
  let restarts = 0;
  for (const container of listed) {
    const inspected = await api.json<{ RestartCount?: number } | undefined>('GET', `/containers/${container.Id}/json`, { accept: [404] });
    restarts += inspected?.RestartCount ?? 0;
  }
  return restarts;
}
