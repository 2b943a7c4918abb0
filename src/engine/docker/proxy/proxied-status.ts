// What runs of a service its server's proxy serves: its newest running web container that
// answers its health path (asked from the proxy's container, over the proxy's network: it is
// published on no port), with the https address people use and the upstream the proxy sends requests to.
import type { AppDefinition } from '../../apps/app-definition.js';
import type { ServiceSpec, ServiceStatus } from '../../driver.js';
import type { AppContainerSummary } from '../app-containers.js';
import { containerPid } from '../containers.js';
import type { DockerApi } from '../docker-api.js';
import type { DockerDriverOptions } from '../docker-driver-options.js';
import { answersThroughProxy } from './health-probe.js';
import { httpsAddressOf } from './route-server.js';

export async function proxiedStatus(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, web: AppContainerSummary[],
): Promise<ServiceStatus> {
  const running = web.filter((container) => container.running).sort((a, b) => b.revision - a.revision);
  for (const container of running) {
    if (await answersThroughProxy(api, service.server.id, `${container.name}:${app.web.port}`, app.web.healthPath, service.id)) {
      const { pid } = await containerPid(api, container.id);
      const { name, port } = await httpsAddressOf(options.db, service.id, service.server.id);
      return {
        state: 'running', pid, port, revision: container.revision, publishedHost: name,
        proxy: { upstream: `${container.name}:${app.web.port}`, healthPath: app.web.healthPath },
      };
    }
  }
  if (running[0]) return { state: 'starting', pid: (await containerPid(api, running[0].id)).pid };
  return { state: 'stopped' };
}
