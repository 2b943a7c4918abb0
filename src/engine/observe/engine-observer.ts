// Reads a service's logs and metrics where it runs: its Docker engine, or this machine's files
// and /proc for the local driver. The capabilities have already checked the token (invoke());
// this only finds the service's server and asks it. An engine that does not answer becomes a
// refusal whose sentence names the engine (docker-api.ts), never an internal error.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { ObserverRefusal, type LogPage, type LogQuery, type ServiceMetrics, type ServiceObserver } from '../../core/service-observer.js';
import { DriverError, type ServiceSpec } from '../driver.js';
import { DockerError } from '../docker/docker-api.js';
import type { EngineRegistry } from '../docker/engine-registry.js';
import { LOG_FILE } from '../erp-app/config.js';
import { localServerRoot } from '../local/local-driver.js';
import { loadServiceSpec } from '../service-spec.js';
import { CpuWindows } from './cpu-window.js';
import { readDockerLogs } from './docker-logs.js';
import { DockerMetrics } from './docker-metrics.js';
import { readLocalLog } from './local-logs.js';
import { localMetrics } from './local-metrics.js';

export class EngineObserver implements ServiceObserver {
  private readonly cpu = new CpuWindows();
  private readonly docker = new DockerMetrics(this.cpu);

  constructor(private readonly db: Kysely<Database>, private readonly engines: EngineRegistry, private readonly dataDir: string) {}

  async logs(serviceId: string, query: LogQuery): Promise<LogPage> {
    const service = await this.serviceOf(serviceId);
    if (!service.server.docker) return readLocalLog(join(this.serviceDir(service), LOG_FILE), query);
    return this.fromEngine('logs', () => readDockerLogs(this.engines.engineOf(service.server).api, service.id, query));
  }

  async metrics(serviceId: string): Promise<ServiceMetrics> {
    const service = await this.serviceOf(serviceId);
    if (!service.server.docker) return localMetrics(this.serviceDir(service), this.cpu);
    return this.fromEngine('metrics', () => this.docker.of(this.engines.engineOf(service.server).api, service.id));
  }

  private serviceDir(service: ServiceSpec): string {
    return join(localServerRoot(this.dataDir, service.server), service.id);
  }

  private async serviceOf(serviceId: string): Promise<ServiceSpec> {
    const service = await loadServiceSpec(this.db, serviceId);
    if (!service) throw new ObserverRefusal('This ERP service was deleted.', 'unavailable');
    return service;
  }

  private async fromEngine<T>(what: string, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof DockerError || error instanceof DriverError) {
        throw new ObserverRefusal(`The service's ${what} cannot be read now. ${error.reason}`, 'unavailable');
      }
      throw error;
    }
  }
}
