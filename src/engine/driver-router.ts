// The engine's one driver: each call goes to the driver of the service's server, the Docker
// driver for a server that is a Docker engine, the local driver otherwise. An engine's own
// failure (it does not answer, refuses a call) becomes the operation's reason: it names the
// engine and says what to do, and holds nothing of ours.
import {
  DriverError, type BackupFile, type RestoreHooks, type RunningService, type ServerSpec, type ServiceDriver, type ServiceSpec,
  type ServiceStatus, type StartHooks,
} from './driver.js';
import { DockerError } from './docker/docker-api.js';

export class DriverRouter implements ServiceDriver {
  readonly name = 'router';

  constructor(readonly local: ServiceDriver, readonly docker: ServiceDriver) {}

  provisionServer(server: ServerSpec): Promise<{ rootDir: string }> {
    return engineFailures(this.driverOf(server).provisionServer(server));
  }

  provision(service: ServiceSpec): Promise<void> {
    return engineFailures(this.driverOf(service.server).provision(service));
  }

  start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    return engineFailures(this.driverOf(service.server).start(service, hooks));
  }

  stop(service: ServiceSpec): Promise<void> {
    return engineFailures(this.driverOf(service.server).stop(service));
  }

  redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    return engineFailures(this.driverOf(service.server).redeploy(service, revision, hooks));
  }

  status(service: ServiceSpec): Promise<ServiceStatus> {
    return engineFailures(this.driverOf(service.server).status(service));
  }

  destroy(service: ServiceSpec): Promise<void> {
    return engineFailures(this.driverOf(service.server).destroy(service));
  }

  storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void> {
    return engineFailures(this.driverOf(service.server).storeMailCredentials(service, credentials));
  }

  backup(service: ServiceSpec, destination: string): Promise<BackupFile> {
    return engineFailures(this.driverOf(service.server).backup(service, destination));
  }

  restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null> {
    return engineFailures(this.driverOf(service.server).restore(service, backup, hooks));
  }

  copy(source: ServiceSpec, copy: ServiceSpec): Promise<void> {
    return engineFailures(this.driverOf(copy.server).copy(source, copy));
  }

  private driverOf(server: ServerSpec): ServiceDriver {
    return server.docker ? this.docker : this.local;
  }
}

async function engineFailures<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof DockerError) throw new DriverError(error.reason, false, { cause: error });
    throw error;
  }
}
