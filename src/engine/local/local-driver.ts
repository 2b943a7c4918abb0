// The embedded default driver: each ERP service is a child process on this machine, listening
// on a loopback port, with its files in <server root>/<service id>/ (config, runtime record,
// log, SQLite database). A server is a directory root with a capacity.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningService, ServerSpec, ServiceDriver, ServiceSpec, ServiceStatus, StartHooks } from '../driver.js';
import { DATABASE_FILE, readMailCredentials, readRuntime, RUNTIME_FILE, writeMailCredentials } from '../erp-app/config.js';
import { openErpDatabase } from '../erp-app/database.js';
import { erpAppEntry } from './erp-app-entry.js';
import { launchService } from './launch.js';
import { allocateLoopbackPort } from './ports.js';
import { probeHealth } from './probe.js';
import { isAlive, runsWithArgument, terminate } from './process-control.js';

export interface LocalDriverOptions {
  dataDir: string;
  /** Ports other services hold, so that a new port never collides with theirs. */
  takenPorts(): Promise<ReadonlySet<number>>;
  host?: string;
  startTimeoutMs?: number;
  stopGraceMs?: number;
}

export class LocalDriver implements ServiceDriver {
  readonly name = 'local';
  readonly host: string;
  private readonly startTimeoutMs: number;
  private readonly stopGraceMs: number;

  constructor(private readonly options: LocalDriverOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.startTimeoutMs = options.startTimeoutMs ?? 10_000;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
  }

  serverRoot(server: ServerSpec): string {
    return resolve(server.rootDir ?? join(this.options.dataDir, 'servers', server.id));
  }

  serviceDir(service: ServiceSpec): string {
    return join(this.serverRoot(service.server), service.id);
  }

  async provisionServer(server: ServerSpec): Promise<{ rootDir: string }> {
    const rootDir = this.serverRoot(server);
    mkdirSync(rootDir, { recursive: true });
    return { rootDir };
  }

  async provision(service: ServiceSpec): Promise<void> {
    const dir = this.serviceDir(service);
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, DATABASE_FILE))) openErpDatabase(join(dir, DATABASE_FILE)).close();
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    const dir = this.serviceDir(service);
    const runtime = readRuntime(dir);
    const port = runtime?.port ?? service.port;
    if (port !== null) {
      const report = await probeHealth(this.host, port, 500);
      if (report && report.serviceId === service.id) return { state: 'running', pid: report.pid, port, revision: report.revision };
    }
    const [booting] = this.candidatePids(service, dir);
    return booting !== undefined ? { state: 'starting', pid: booting } : { state: 'stopped' };
  }

  async start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    // The directory only: a missing database is created by the service process itself, off our event loop.
    mkdirSync(this.serviceDir(service), { recursive: true });
    const current = await this.settled(service);
    if (current.state === 'running') {
      if (current.revision === service.revision) return { pid: current.pid, port: current.port, revision: current.revision };
      await this.stop(service);
    }
    let port = current.state === 'running' ? current.port : service.port;
    if (port === null) {
      port = await allocateLoopbackPort(this.host, await this.options.takenPorts());
      await hooks.portAssigned(port);
    }
    return launchService({
      entry: erpAppEntry(), serviceDir: this.serviceDir(service), startTimeoutMs: this.startTimeoutMs, stopGraceMs: this.stopGraceMs,
      config: {
        serviceId: service.id, name: service.name, revision: service.revision, host: this.host, port,
        outgoingSmtp: service.outgoingSmtp, outgoingSmtpAuth: readMailCredentials(this.serviceDir(service)),
      },
    }, hooks);
  }

  async stop(service: ServiceSpec): Promise<void> {
    const dir = this.serviceDir(service);
    for (let round = 0; round < 3; round++) {
      const status = await this.status(service);
      if (status.state === 'stopped') {
        rmSync(join(dir, RUNTIME_FILE), { force: true });
        return;
      }
      await terminate(status.pid, this.stopGraceMs);
    }
    throw new Error(`service ${service.id} still has a process after three attempts to stop it`);
  }

  async redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    await this.stop(service);
    return this.start({ ...service, revision }, hooks);
  }

  async destroy(service: ServiceSpec): Promise<void> {
    await this.stop(service);
    rmSync(this.serviceDir(service), { recursive: true, force: true });
  }

  async storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    mkdirSync(this.serviceDir(service), { recursive: true });
    writeMailCredentials(this.serviceDir(service), credentials);
  }

  /** Like status(), but a process still booting is waited for, and killed if it never answers. */
  private async settled(service: ServiceSpec): Promise<ServiceStatus> {
    const deadline = Date.now() + this.startTimeoutMs;
    let status = await this.status(service);
    while (status.state === 'starting' && Date.now() < deadline) {
      await sleep(50);
      status = await this.status(service);
    }
    if (status.state !== 'starting') return status;
    await terminate(status.pid, this.stopGraceMs);
    return { state: 'stopped' };
  }

  /** Live pids recorded for the service that really run its application (checked by command line). */
  private candidatePids(service: ServiceSpec, dir: string): number[] {
    const recorded = [readRuntime(dir)?.pid, service.pid].filter((pid): pid is number => typeof pid === 'number' && pid > 0);
    return [...new Set(recorded)].filter((pid) => isAlive(pid) && runsWithArgument(pid, dir) === true);
  }
}
