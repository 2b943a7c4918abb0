// The engine's one driver: each call goes to the driver of the service's server, the Docker
// driver for a server that is a Docker engine, the local driver otherwise. An engine's own
// failure (it does not answer, refuses a call) becomes the operation's reason: it names the
// engine and says what to do, and holds nothing of ours; no reason quotes a secret, is longer
// than a reason's bound, or holds a character that acts instead of being read (publicReason in
// redact-secrets.ts), whichever driver wrote it.
import {
  DriverError, type BackupFile, type ProvisionResult, type RestoreHooks, type RunningService, type ServerSpec, type ServiceDriver, type ServiceSpec,
  type ServiceStatus, type StartHooks,
} from './driver.js';
import { DockerError } from './docker/docker-api.js';
import { publicReason } from './redact-secrets.js';

export class DriverRouter implements ServiceDriver {
  readonly name = 'router';

  /** `moves`: what moves a service between Docker servers (docker/service-move.ts); absent: services do not move. */
  constructor(readonly local: ServiceDriver, readonly docker: ServiceDriver, readonly moves?: Required<Pick<ServiceDriver, 'transferData' | 'removeFromServer'>>) {}

  provisionServer(server: ServerSpec): Promise<{ rootDir: string }> {
    return this.engineFailures(this.driverOf(server).provisionServer(server));
  }

  provision(service: ServiceSpec): Promise<ProvisionResult | void> {
    return this.engineFailures(this.driverOf(service.server).provision(service), service);
  }

  start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    return this.engineFailures(this.driverOf(service.server).start(service, this.timedFailures(hooks, service)), service);
  }

  stop(service: ServiceSpec): Promise<void> {
    return this.engineFailures(this.driverOf(service.server).stop(service), service);
  }

  redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    return this.engineFailures(this.driverOf(service.server).redeploy(service, revision, this.timedFailures(hooks, service)), service);
  }

  status(service: ServiceSpec): Promise<ServiceStatus> {
    return this.engineFailures(this.driverOf(service.server).status(service), service);
  }

  destroy(service: ServiceSpec): Promise<void> {
    return this.engineFailures(this.driverOf(service.server).destroy(service), service);
  }

  storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    return this.engineFailures(this.driverOf(service.server).storeMailCredentials(service, credentials), service);
  }

  backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    return this.engineFailures(this.driverOf(service.server).backup(service, destination), service);
  }

  restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    return this.engineFailures(this.driverOf(service.server).restore(service, backup, this.timedFailures(hooks, service)), service);
  }

  copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    return this.engineFailures(this.driverOf(copy.server).copy(source, copy), copy);
  }

  transferData(source: ServiceSpec, target: ServiceSpec): Promise<{ sizeBytes: number }> {
    if (!source.server.docker || !target.server.docker || !this.moves) return Promise.reject(new DriverError('Only a service on a Docker server moves, and only to another Docker server.'));
    return this.engineFailures(this.moves.transferData(source, target), source);
  }

  removeFromServer(service: ServiceSpec): Promise<void> {
    if (!service.server.docker || !this.moves) return Promise.reject(new DriverError('Only a service on a Docker server moves.'));
    return this.engineFailures(this.moves.removeFromServer(service), service);
  }

  async restartCount(service: ServiceSpec): Promise<number | null> {
    const driver = this.driverOf(service.server);
    return driver.restartCount ? this.engineFailures(driver.restartCount(service), service) : null;
  }

  /**
   * A failure's reason as stored: an engine's own failure becomes a DriverError; every reason has
   * its secrets taken out before it is cut to its bound, and its invisible characters escaped.
   */
  private async engineFailures<T>(call: Promise<T>, service?: ServiceSpec): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (!(error instanceof DockerError || error instanceof DriverError)) throw error;
      const driver = service && this.driverOf(service.server);
      const known = service && driver?.secretValuesOf ? await driver.secretValuesOf(service).catch(() => []) : [];
      const portUnusable = error instanceof DriverError && error.portUnusable;
      throw new DriverError(publicReason(error.reason, known), portUnusable, { cause: error });
    }
  }

  /**
   * A part of a start a driver times as a step of its own (StartHooks.timed) keeps the reason it
   * failed with as the step's detail: that reason reads as the whole call's would (an engine's
   * failure named, no secret quoted). The driver itself still gets the failure it threw.
   */
  private timedFailures<H extends StartHooks>(hooks: H, service: ServiceSpec): H {
    if (!hooks.timed) return hooks;
    const redacting = async <T>(step: string, work: () => Promise<T>, detail?: string): Promise<T> => {
      let thrown: { error: unknown } | undefined;
      try {
        return await hooks.timed!<T>(step, () => work().catch((error: unknown) => {
          thrown = { error };
          return this.engineFailures<never>(Promise.reject(error), service);
        }), detail);
      } catch (error) {
        throw thrown ? thrown.error : error;
      }
    };
    return Object.assign(Object.create(hooks) as H, { timed: redacting });
  }

  private driverOf(server: ServerSpec): ServiceDriver {
    return server.docker ? this.docker : this.local;
  }
}

