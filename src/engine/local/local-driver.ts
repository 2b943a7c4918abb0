// The embedded default driver: each ERP service is a child process on this machine, listening
// on a loopback port, with its files in <server root>/<service id>/ (config, runtime record,
// log, SQLite database). A server is a directory root with a capacity.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DriverError, type BackupFile, type RestoreHooks, type RunningService, type ServerSpec, type ServiceDriver, type ServiceSpec,
  type ServiceStatus, type StartHooks,
} from '../driver.js';
import { DATABASE_FILE, readMailCredentials, readRuntime, RUNTIME_FILE, writeMailCredentials } from '../erp-app/config.js';
import { openErpDatabase } from '../erp-app/database.js';
import type { PackedFile } from '../backup-compression.js';
import { outgoingRelayTarget, pinnedHostPort } from '../outgoing-relay-target.js';
import type { RelayPolicy } from '../../mail/relay-address.js';
import { SecretBox } from '../../secrets/secret-box.js';
import { loadSecretsKeys } from '../../secrets/secrets-key.js';
import { runDatabaseJob } from './database-job.js';
import { dropPreviousDatabase, removeDatabase, replaceDatabase, rollBackSwap, swapInDatabase } from './database-swap.js';
import { erpAppEntry } from './erp-app-entry.js';
import { launchService } from './launch.js';
import { allocateLoopbackPort } from './ports.js';
import { probeHealth } from './probe.js';
import { isAlive, runsWithArgument, terminate } from './process-control.js';

export interface LocalDriverOptions {
  dataDir: string;
  /** Ports other services hold, so that a new port never collides with theirs. */
  takenPorts(): Promise<ReadonlySet<number>>;
  /**
   * "host:port" of the mail catcher while it runs, else null. A copy's outgoing mail goes there
   * and nowhere else, whatever its outgoing-mail setting says.
   */
  copyMailRelay?: () => string | null;
  /** How a production service's relay is checked at each start (src/mail/relay-address.ts); default: no private address. */
  outgoingRelay?: RelayPolicy;
  host?: string;
  /** Seals the copies' mail passwords kept in their service directories; the data directory's own key when not given. */
  secrets?: SecretBox;
  startTimeoutMs?: number;
  stopGraceMs?: number;
}

/** What a local copy's mail password is sealed with: its service, so a sealed password moved to another service does not open. */
function mailPasswordContext(serviceId: string): string {
  return `local-service-mail:${serviceId}`;
}

/** A local server's directory: the one it was given, else one under the data directory. */
export function localServerRoot(dataDir: string, server: ServerSpec): string {
  return resolve(server.rootDir ?? join(dataDir, 'servers', server.id));
}

export class LocalDriver implements ServiceDriver {
  readonly name = 'local';
  readonly host: string;
  private readonly startTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly secrets: SecretBox;

  constructor(private readonly options: LocalDriverOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.secrets = options.secrets ?? new SecretBox(loadSecretsKeys(options.dataDir));
    this.startTimeoutMs = options.startTimeoutMs ?? 10_000;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
  }

  serverRoot(server: ServerSpec): string {
    return localServerRoot(this.options.dataDir, server);
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
        outgoingSmtp: await this.outgoingSmtpOf(service), outgoingSmtpAuth: this.mailCredentialsOf(service),
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

  /** The password is sealed with the secrets key and bound to the service, as the Docker driver keeps it (docker-state.ts). */
  async storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    mkdirSync(this.serviceDir(service), { recursive: true });
    const sealed = credentials && { username: credentials.username, password: this.secrets.seal(credentials.password, mailPasswordContext(service.id)) };
    writeMailCredentials(this.serviceDir(service), sealed);
  }

  /** What storeMailCredentials kept, opened; a password an earlier version kept in clear is read as it is. */
  private mailCredentialsOf(service: ServiceSpec): { username: string; password: string } | null {
    const stored = readMailCredentials(this.serviceDir(service));
    return stored && { username: stored.username, password: this.secrets.reveal(stored.password, mailPasswordContext(service.id)) };
  }

  async backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    // A service the operator's command created was never provisioned by a worker: it gets its
    // database now (what provisioning or a first start would create), as a Docker service's does.
    await this.provision(service);
    mkdirSync(dirname(destination), { recursive: true });
    const packed = await runDatabaseJob<PackedFile>({
      kind: 'pack', source: join(this.serviceDir(service), DATABASE_FILE), destination,
    });
    return { path: destination, ...packed };
  }

  async copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    const dir = this.serviceDir(copy);
    mkdirSync(dir, { recursive: true });
    const target = join(dir, DATABASE_FILE);
    const sourceFile = join(this.serviceDir(source), DATABASE_FILE);
    if (!existsSync(sourceFile)) {
      // Never started: the copy gets the database the source itself would create on its first start.
      removeDatabase(target);
      openErpDatabase(target).close();
      return;
    }
    const staged = `${target}.copying`;
    try {
      await runDatabaseJob({ kind: 'snapshot', source: sourceFile, destination: staged });
      replaceDatabase(target, staged);
    } finally {
      rmSync(staged, { force: true });
    }
  }

  async restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    const dir = this.serviceDir(service);
    mkdirSync(dir, { recursive: true });
    const staged = join(dir, `${DATABASE_FILE}.restoring`);
    try {
      // Everything that can be wrong with the backup is found here, before the service is touched.
      await runDatabaseJob({ kind: 'unpack', archive: backup.path, sha256: backup.sha256, destination: staged });
      const wasRunning = (await this.settled(service)).state === 'running' || hooks.ranBefore;
      if (wasRunning) await this.stop(service);
      try {
        await hooks.beforeSwap({ hasData: existsSync(join(dir, DATABASE_FILE)) });
        swapInDatabase(dir, staged);
      } catch (error) {
        if (wasRunning) await this.startAgain(service, hooks, error);
        throw error;
      }
      if (!wasRunning) {
        dropPreviousDatabase(dir);
        return null;
      }
      return await this.startOnRestored(service, hooks);
    } finally {
      rmSync(staged, { force: true });
    }
  }

  /** Starts the service on its restored database; if it does not start, puts the old one back and starts that. */
  private async startOnRestored(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    const dir = this.serviceDir(service);
    try {
      const running = await this.start(service, hooks);
      dropPreviousDatabase(dir);
      return running;
    } catch (error) {
      rollBackSwap(dir);
      await this.startAgain(service, hooks, error);
      throw new DriverError(
        `The service did not start on the restored database (${reasonOf(error)}), so its previous database was put back ` +
          'and it was started again. Nothing was restored.', false, { cause: error });
    }
  }

  /** After a failed step: the service runs again on its own data, or the reason says both failures. */
  private async startAgain(service: ServiceSpec, hooks: StartHooks, failure: unknown): Promise<void> {
    try {
      await this.start(service, hooks);
    } catch (startError) {
      throw new DriverError(`${reasonOf(failure)}. Starting the service again on its own data failed too: ${reasonOf(startError)}`,
        startError instanceof DriverError && startError.portUnusable, { cause: startError });
    }
  }

  /**
   * A copy's mail only ever goes to the mail catcher (none while it is not running), never to its
   * own setting. A production service's goes to its relay's address as checked now: the ERP
   * process connects to that address and never resolves the name itself (it speaks no TLS).
   */
  private async outgoingSmtpOf(service: ServiceSpec): Promise<string | null> {
    if (service.parentId !== null) return this.options.copyMailRelay?.() ?? null;
    const target = await outgoingRelayTarget(service, this.options.outgoingRelay ?? { allowPrivate: false });
    return target && pinnedHostPort(target);
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

function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : 'an internal error').replace(/\.$/, '');
}
