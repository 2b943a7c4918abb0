// The services of a multi-container app definition (tryton: PostgreSQL and Tryton) on a Docker
// engine: what the Docker driver does for a service whose `app` is not the single-container
// demo. One labelled bridge network per service, one volume per definition volume, the
// definition's secrets generated at create and sealed (service-secrets.ts), the containers
// started in the definition's order (each one with a healthcheck waited for), the migrate
// command before the web container of a new revision first starts, and the web container
// published on the service's port: its address is the service's url.
//
// Not yet: backup, restore, copy and redeploy of such a service. They fail at once with a
// sentence (`notSupported`) rather than treat the app's data as the demo's one volume.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { findApp } from '../apps/app-registry.js';
import type { AppContainer, AppDefinition } from '../apps/app-definition.js';
import { ADMIN_PASSWORD_SECRET, sealInitialCredentials, type SealedInitialCredentials } from '../apps/initial-credentials.js';
import { renderEnvironment } from '../apps/render-environment.js';
import { smtpUri } from '../apps/smtp-uri.js';
import { DriverError, type RunningService, type ServiceSpec, type ServiceStatus, type StartHooks } from '../driver.js';
import {
  createAppContainer, ensureNetwork, listAppContainers, removeNetworks, runAppCommand, waitEngineHealthy, type AppContainerSummary,
} from './app-containers.js';
import { containerLimitsOf } from './container-limits.js';
import {
  answersHealth, containerPid, ensureVolume, keepRunning, listServiceContainers, listVolumes, removeContainer, removeVolume,
  startContainer, startPublished, stopContainer, waitHealthy,
} from './containers.js';
import type { DockerApi } from './docker-api.js';
import { publishedHost } from './engine-address.js';
import type { EngineRegistry } from './engine-registry.js';
import { appContainerName, appNetworkName, appVolumeName, LABEL, labelsOf } from './labels.js';
import { choosePort } from './ports.js';
import { deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets } from './service-secrets.js';

export interface AppServiceDriverOptions {
  db: Kysely<Database>;
  secrets: SecretBox;
  engines: EngineRegistry;
  takenPorts(): Promise<ReadonlySet<number>>;
  stopGraceMs: number;
}

/** True for a service the Docker driver runs from an app definition rather than from its server's image. */
export function runsAnApp(service: ServiceSpec): boolean {
  return typeof service.app === 'string' && service.app !== 'demo';
}

export class AppServiceDriver {
  constructor(private readonly options: AppServiceDriverOptions) {}

  /** The network, the volumes and the sealed secrets; the admin's first login, sealed, when the definition has one. */
  async provision(service: ServiceSpec): Promise<{ initialCredentials?: SealedInitialCredentials }> {
    const app = await this.appOf(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    // Said now, not at the first start: no registry is reachable, so a missing image is the operator's to build.
    for (const image of new Set(app.containers.map((container) => container.image))) {
      const found = await api.json<object | undefined>('GET', `/images/${encodeURIComponent(image)}/json`, { accept: [404] });
      if (!found) {
        throw new DriverError(`The image ${image} of the app ${app.name} is not on the Docker engine ${address.text}; the operator builds it ` +
          `with "teaminfra admin build-app-images --app ${app.name} --docker-host ${address.text}", then create the service again.`);
      }
    }
    await this.ensureNetworkAndVolumes(api, service, app);
    const values = await ensureServiceSecrets(this.options.db, this.options.secrets, service.id, app.secrets);
    const admin = values[ADMIN_PASSWORD_SECRET];
    return admin === undefined ? {} : { initialCredentials: sealInitialCredentials(this.options.secrets, service.id, admin) };
  }

  async status(service: ServiceSpec): Promise<ServiceStatus> {
    const app = await this.appOf(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const running = (await listAppContainers(api, service.id)).filter((container) => container.running);
    const web = running.filter((container) => container.appService === app.web.service).sort((a, b) => b.revision - a.revision);
    for (const container of web) {
      if (container.port !== null && await answersHealth(host, container.port, app.web.healthPath, service.id)) {
        const { pid } = await containerPid(api, container.id);
        return { state: 'running', pid, port: container.port, revision: container.revision, publishedHost: host };
      }
    }
    if (running[0]) return { state: 'starting', pid: (await containerPid(api, running[0].id)).pid };
    return { state: 'stopped' };
  }

  async start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
    const app = await this.appOf(service);
    const { api, address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    await this.ensureNetworkAndVolumes(api, service, app);
    const before = await listAppContainers(api, service.id);
    // Another revision's containers (a crash's leftovers) go first: they hold the same volumes.
    for (const stale of before.filter((container) => container.revision !== service.revision)) await removeContainer(api, stale.id);
    const mine = before.filter((container) => container.revision === service.revision);
    const values = await this.valuesOf(service, host, service.port);
    let result: RunningService | undefined;
    for (const container of app.containers) {
      if (container.name === app.web.service) {
        const existing = mine.find((each) => each.appService === container.name);
        // Before the web container of this revision first exists: the database is made, or upgraded by a new image.
        if (!existing && app.commands.migrate) await this.migrate(api, service, app, values);
        result = await this.startWeb(api, service, app, container, existing, hooks, host);
      } else {
        await this.startSupporting(api, service, app, container, mine.find((each) => each.appService === container.name), values);
      }
    }
    if (!result) throw new DriverError(`The app ${app.name} has no web container named ${app.web.service}.`);
    for (const container of await listAppContainers(api, service.id)) await keepRunning(api, container.id);
    return result;
  }

  /** Every container, the web one first, so that nobody is served while its database goes away. */
  async stop(service: ServiceSpec): Promise<void> {
    const app = await this.appOf(service).catch(() => null);
    const { api } = this.options.engines.engineOf(service.server);
    const order = app ? [...app.containers].reverse().map((container) => container.name) : [];
    const containers = (await listAppContainers(api, service.id)).filter((container) => container.running)
      .sort((a, b) => order.indexOf(a.appService) - order.indexOf(b.appService));
    for (const container of containers) await stopContainer(api, container.id, this.options.stopGraceMs);
  }

  /** Everything of the service on its engine (containers, one-off containers, volumes, network) and its secrets. Idempotent. */
  async destroy(service: ServiceSpec): Promise<void> {
    const { api } = this.options.engines.engineOf(service.server);
    for (const container of await listAppContainers(api, service.id)) await removeContainer(api, container.id);
    for (const helper of await listServiceContainers(api, service.id, 'helper')) await removeContainer(api, helper.id);
    for (const volume of await listVolumes(api, { [LABEL.serviceId]: service.id, [LABEL.role]: 'data' })) await removeVolume(api, volume);
    await removeNetworks(api, service.id);
    await deleteServiceSecrets(this.options.db, service.id);
  }

  async secretValuesOf(service: ServiceSpec): Promise<string[]> {
    return Object.values(await readServiceSecrets(this.options.db, this.options.secrets, service.id));
  }

  /** What this slice does not do yet for an app's service: said at once, before anything is touched. */
  notSupported(service: ServiceSpec, what: 'Backups' | 'Restores' | 'Copies' | 'Redeploys'): DriverError {
    return new DriverError(`${what} of services of the app ${service.app} are not supported yet.`);
  }

  private async appOf(service: ServiceSpec): Promise<AppDefinition> {
    const app = await findApp(this.options.db, service.app as string);
    if (!app) throw new DriverError(`The app ${service.app} of this service is no longer registered; the operator can add it again (admin add-app).`);
    return app;
  }

  private async ensureNetworkAndVolumes(api: DockerApi, service: ServiceSpec, app: AppDefinition): Promise<void> {
    await ensureNetwork(api, appNetworkName(service.id), labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'network' }));
    for (const volume of app.volumes) {
      await ensureVolume(api, appVolumeName(service.id, volume), labelsOf({ serviceId: service.id, serverId: service.server.id, role: 'data' }));
    }
  }

  /** The values `${NAME}` may name: the service's secrets (opened now) and the built-ins. */
  private async valuesOf(service: ServiceSpec, host: string, port: number | null): Promise<Record<string, string>> {
    const secrets = await readServiceSecrets(this.options.db, this.options.secrets, service.id);
    const relay = service.outgoingSmtp;
    const separator = relay?.lastIndexOf(':') ?? -1;
    const smtp = relay ? { host: relay.slice(0, separator), port: Number(relay.slice(separator + 1)) } : null;
    return {
      ...secrets,
      TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name, TEAMINFRA_REVISION: String(service.revision),
      TEAMINFRA_PUBLIC_URL: port === null ? '' : `http://${host}:${port}`,
      TEAMINFRA_SMTP_HOST: smtp?.host ?? '', TEAMINFRA_SMTP_PORT: smtp ? String(smtp.port) : '',
      TEAMINFRA_SMTP_USER: '', TEAMINFRA_SMTP_PASSWORD: '', TEAMINFRA_SMTP_URI: smtpUri(smtp),
    };
  }

  private shared(service: ServiceSpec, container: AppContainer, values: Record<string, string>) {
    return {
      serviceId: service.id, serverId: service.server.id, revision: service.revision, container, network: appNetworkName(service.id),
      volumeOf: (volume: string) => appVolumeName(service.id, volume), env: renderEnvironment(container, values),
      limits: containerLimitsOf(service.server.docker?.limits),
    };
  }

  /** A container other than the web one (the database): running, and healthy when it has a healthcheck. */
  private async startSupporting(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    values: Record<string, string>,
  ): Promise<void> {
    const id = existing?.id ?? await createAppContainer(api, { ...this.shared(service, container, values), name: appContainerName(service.id, service.revision, container.name) });
    if (!existing?.running) await startContainer(api, id);
    if (container.healthcheck) await waitEngineHealthy(api, id, container.name, app.deadlines.startMs);
  }

  private async migrate(api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>): Promise<void> {
    const command = app.commands.migrate!;
    const container = app.containers.find((each) => each.name === command.service)!;
    const { exitCode, output } = await runAppCommand(api, {
      ...this.shared(service, container, values), command, what: `The app's migrate command`, timeoutMs: app.deadlines.migrateMs,
    });
    if (exitCode !== 0) throw new DriverError(`The app's migrate command failed (exit code ${exitCode})${output}, so the service was not started.`);
  }

  /** The web container published on the service's port (kept across starts), answering its health path. */
  private async startWeb(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    hooks: StartHooks, host: string,
  ): Promise<RunningService> {
    const { address } = this.options.engines.engineOf(service.server);
    const { id, published } = await startPublished(api, {
      existingId: existing?.id, port: existing?.port ?? service.port, containerPort: app.web.port,
      choosePort: async () => choosePort(address, await this.options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
      create: async (port) => createAppContainer(api, {
        // Rendered with the port people will use, for links the app writes in its emails.
        ...this.shared(service, container, await this.valuesOf(service, host, port)), name: appContainerName(service.id, service.revision, container.name),
        publish: { containerPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '', hostPort: port },
      }),
    });
    await hooks.spawned((await containerPid(api, id)).pid);
    try {
      const pid = await waitHealthy(api, id, { host, port: published, path: app.web.healthPath, serviceId: service.id }, app.deadlines.startMs);
      return { pid, port: published, revision: service.revision, publishedHost: host };
    } catch (error) {
      await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
      throw error;
    }
  }
}
