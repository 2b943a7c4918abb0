// The services of a multi-container app definition (tryton: PostgreSQL and Tryton) on a Docker
// engine: what the Docker driver does for a service whose `app` is not the single-container
// demo. One labelled bridge network per service, one volume per definition volume, the
// definition's secrets generated at create and sealed (service-secrets.ts), the containers
// started in the definition's order (each one with a healthcheck waited for), the migrate
// command before the web container of a new revision first starts, and the service's front
// (service-front.ts) published on the service's port: its address is the service's url, and
// it forwards to the web container of the revision that is current.
//
// A redeploy runs the definition as it is now (an operator's `admin add-app --replace` with a
// new image tag is what gives a service a new image): the migrate command of the new image
// with the definition's migrate deadline, then the new web container beside the one serving,
// and the front switched once it answers. The other containers (the database) keep running.
//
// Not yet: backup, restore and copy of such a service. They fail at once with a sentence
// (`notSupported`) rather than treat the app's data as the demo's one volume.
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
  startContainer, startOnEnginePort, stopContainer, waitHealthy,
} from './containers.js';
import { ensureFront, findFront, frontStatus, removeFront, stopFront, switchFront } from './service-front.js';
import type { DockerApi } from './docker-api.js';
import { publishedHost } from './engine-address.js';
import type { EngineRegistry } from './engine-registry.js';
import { appContainerName, appNetworkName, appVolumeName, LABEL, labelsOf } from './labels.js';
import { choosePort } from './ports.js';
import { deleteServiceSecrets, ensureServiceSecrets, readServiceSecrets } from './service-secrets.js';
import { readDockerState } from './docker-state.js';
import { relayLoginOf } from '../../mail/outgoing-relay.js';

export interface AppServiceDriverOptions {
  db: Kysely<Database>;
  secrets: SecretBox;
  engines: EngineRegistry;
  /** "host:port" of the mail catcher as a container reaches it, while it runs; else null. */
  containerMailRelay(): string | null;
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
    const containers = await listAppContainers(api, service.id);
    if (await findFront(api, service.id)) return frontStatus(api, service.id, host, app.web.healthPath, containers);
    // A service started before fronts existed: its web container is published on the service's port itself.
    const running = containers.filter((container) => container.running);
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
    const { api } = this.options.engines.engineOf(service.server);
    await this.ensureNetworkAndVolumes(api, service, app);
    await this.retireUnfronted(api, service, app);
    const before = await listAppContainers(api, service.id);
    // Another revision's web container (a crash's leftovers) goes first: after a start, this revision serves.
    for (const stale of before.filter((container) => container.appService === app.web.service && container.revision !== service.revision)) {
      await removeContainer(api, stale.id);
    }
    try {
      const { running } = await this.runRevision(api, service, app, before, hooks);
      return running;
    } catch (error) {
      if (error instanceof MigrateFailed) throw new DriverError(`${error.reason}, so the service was not started.`, false, { cause: error });
      throw error;
    }
  }

  /**
   * Runs `revision` from the definition as it is now: the database kept as it runs, the migrate
   * command of the new image with the definition's own deadline, the new web container beside
   * the one serving, and the front switched to it once it answers. Any failure before the
   * switch leaves the revision before serving, untouched, and says so.
   */
  async redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
    const app = await this.appOf(service);
    const { api } = this.options.engines.engineOf(service.server);
    await this.ensureNetworkAndVolumes(api, service, app);
    await this.retireUnfronted(api, service, app);
    const before = await listAppContainers(api, service.id);
    const webOf = (container: AppContainerSummary) => container.appService === app.web.service;
    const serving = before.filter((container) => webOf(container) && container.running && container.revision !== revision)
      .sort((a, b) => b.revision - a.revision);
    let started: { containerId: string; running: RunningService };
    try {
      started = await this.runRevision(api, { ...service, revision }, app, before, hooks);
    } catch (error) {
      const failed = (await listAppContainers(api, service.id)).filter((container) => webOf(container) && container.revision === revision);
      for (const container of failed) await removeContainer(api, container.id);
      if (serving.length === 0) {
        if (error instanceof MigrateFailed) throw new DriverError(`${error.reason}, so the service was not started.`, false, { cause: error });
        throw error;
      }
      throw new DriverError(`Revision ${revision} did not start (${reasonOf(error)}), so revision ${serving[0]!.revision} keeps serving.`,
        false, { cause: error });
    }
    const others = (await listAppContainers(api, service.id)).filter((container) => webOf(container) && container.id !== started.containerId);
    for (const container of others) await removeContainer(api, container.id);
    return started.running;
  }

  /** Every container, the web one first, so that nobody is served while its database goes away. */
  async stop(service: ServiceSpec): Promise<void> {
    const app = await this.appOf(service).catch(() => null);
    const { api } = this.options.engines.engineOf(service.server);
    const order = app ? [...app.containers].reverse().map((container) => container.name) : [];
    await stopFront(api, service.id, this.options.stopGraceMs);
    const containers = (await listAppContainers(api, service.id)).filter((container) => container.running)
      .sort((a, b) => order.indexOf(a.appService) - order.indexOf(b.appService));
    for (const container of containers) await stopContainer(api, container.id, this.options.stopGraceMs);
  }

  /** Everything of the service on its engine (containers, one-off containers, volumes, network) and its secrets. Idempotent. */
  async destroy(service: ServiceSpec): Promise<void> {
    const { api } = this.options.engines.engineOf(service.server);
    await removeFront(api, service.id);
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
  notSupported(service: ServiceSpec, what: 'Backups' | 'Restores' | 'Copies'): DriverError {
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
    const smtp = await this.smtpOf(service);
    return {
      ...secrets,
      TEAMINFRA_SERVICE_ID: service.id, TEAMINFRA_SERVICE_NAME: service.name, TEAMINFRA_REVISION: String(service.revision),
      TEAMINFRA_PUBLIC_URL: port === null ? '' : `http://${host}:${port}`,
      TEAMINFRA_SMTP_HOST: smtp?.host ?? '', TEAMINFRA_SMTP_PORT: smtp ? String(smtp.port) : '',
      TEAMINFRA_SMTP_USER: smtp?.user ?? '', TEAMINFRA_SMTP_PASSWORD: smtp?.password ?? '', TEAMINFRA_SMTP_URI: smtpUri(smtp),
    };
  }

  /**
   * Where the service's mail goes: a copy's always to the mail catcher (with the login the
   * catcher gave it), whatever it was given; a production service's to its relay
   * (set_outgoing_mail), with its login; none without one.
   */
  private async smtpOf(service: ServiceSpec): Promise<{ host: string; port: number; user: string | null; password: string | null } | null> {
    const copy = service.parentId !== null;
    const relay = copy ? this.options.containerMailRelay() : service.outgoingSmtp;
    if (!relay) return null;
    const separator = relay.lastIndexOf(':');
    const address = { host: relay.slice(0, separator), port: Number(relay.slice(separator + 1)) };
    if (copy) {
      const { mail } = await readDockerState(this.options.db, this.options.secrets, service.id);
      return { ...address, user: mail?.username ?? null, password: mail?.password ?? null };
    }
    const login = await relayLoginOf(this.options.db, this.options.secrets, service.id);
    return { ...address, user: login?.user ?? null, password: login?.password ?? null };
  }

  private shared(service: ServiceSpec, container: AppContainer, values: Record<string, string>) {
    return {
      serviceId: service.id, serverId: service.server.id, revision: service.revision, container, network: appNetworkName(service.id),
      volumeOf: (volume: string) => appVolumeName(service.id, volume), env: renderEnvironment(container, values),
      limits: containerLimitsOf(service.server.docker?.limits),
    };
  }

  /**
   * Every container of the definition in its order, for `service.revision`: the front on the
   * service's port, each other container (the database) adopted whatever revision made it, and
   * the web container of this revision (made after the migrate command when it does not exist
   * yet), healthy, and the one the front forwards to.
   */
  private async runRevision(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, before: AppContainerSummary[], hooks: StartHooks,
  ): Promise<{ containerId: string; running: RunningService }> {
    const { address } = this.options.engines.engineOf(service.server);
    const host = publishedHost(address);
    const front = await ensureFront(api, {
      serviceId: service.id, serverId: service.server.id, image: await this.options.engines.frontImageOf(service.server),
      port: service.port, targetPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '',
      choosePort: async () => choosePort(address, await this.options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
    });
    // Rendered with the port people use, for links the app writes in its emails.
    const values = await this.valuesOf(service, host, front.port);
    let result: { containerId: string; running: RunningService } | undefined;
    for (const container of app.containers) {
      if (container.name === app.web.service) {
        const existing = before.find((each) => each.appService === container.name && each.revision === service.revision);
        result = await this.startWeb(api, service, app, container, existing, hooks, host, values, front);
      } else {
        await this.startSupporting(api, service, app, container, await this.adopted(api, before, container.name), values);
      }
    }
    if (!result) throw new DriverError(`The app ${app.name} has no web container named ${app.web.service}.`);
    for (const container of await listAppContainers(api, service.id)) if (container.running) await keepRunning(api, container.id);
    return result;
  }

  /**
   * The container of a supporting service (the database) to keep: the running one, else the
   * newest. Any other goes: two database servers must never open the same volume.
   */
  private async adopted(api: DockerApi, before: AppContainerSummary[], appService: string): Promise<AppContainerSummary | undefined> {
    const candidates = before.filter((each) => each.appService === appService)
      .sort((a, b) => Number(b.running) - Number(a.running) || b.revision - a.revision);
    for (const extra of candidates.slice(1)) await removeContainer(api, extra.id);
    return candidates[0];
  }

  /** A service last started before fronts existed: its web container holds the service's port, which the front needs. */
  private async retireUnfronted(api: DockerApi, service: ServiceSpec, app: AppDefinition): Promise<void> {
    if (await findFront(api, service.id)) return;
    for (const container of await listAppContainers(api, service.id)) {
      if (container.appService === app.web.service) await removeContainer(api, container.id);
    }
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

  /** The definition's migrate command, in a one-off container of the revision's image, within the migrate deadline (not the start's). */
  private async migrate(api: DockerApi, service: ServiceSpec, app: AppDefinition, values: Record<string, string>): Promise<void> {
    const command = app.commands.migrate!;
    const container = app.containers.find((each) => each.name === command.service)!;
    const { exitCode, output } = await runAppCommand(api, {
      ...this.shared(service, container, values), command, what: `The app's migrate command`, timeoutMs: app.deadlines.migrateMs,
    }).catch((error: unknown) => {
      throw error instanceof DriverError ? new MigrateFailed(error.reason.replace(/\.$/, ''), false, { cause: error }) : error;
    });
    if (exitCode !== 0) throw new MigrateFailed(`The app's migrate command failed (exit code ${exitCode})${output}`);
  }

  /**
   * The web container of this revision, running and healthy on a port the engine picks, then the
   * one the front forwards to, and answering through the front. The migrate command runs first
   * when the container does not exist yet (a new revision, or a first start).
   */
  private async startWeb(
    api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer, existing: AppContainerSummary | undefined,
    hooks: StartHooks, host: string, values: Record<string, string>, front: { id: string; port: number },
  ): Promise<{ containerId: string; running: RunningService }> {
    const { address } = this.options.engines.engineOf(service.server);
    const target = (port: number) => ({ host, port, path: app.web.healthPath, serviceId: service.id });
    let id = existing?.id;
    let pid: number | null = null;
    if (existing?.running && existing.port !== null) {
      pid = await waitHealthy(api, existing.id, target(existing.port), app.deadlines.startMs).catch(() => null);
    }
    if (pid === null) {
      if (id === undefined && app.commands.migrate) await this.migrate(api, service, app, values);
      id ??= await createAppContainer(api, {
        ...this.shared(service, container, values), name: appContainerName(service.id, service.revision, container.name),
        publish: { containerPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '', hostPort: null },
      });
      const published = await startOnEnginePort(api, id, app.web.port);
      await hooks.spawned((await containerPid(api, id)).pid);
      try {
        pid = await waitHealthy(api, id, target(published), app.deadlines.startMs);
      } catch (error) {
        await stopContainer(api, id, this.options.stopGraceMs).catch(() => undefined);
        throw error;
      }
    }
    await switchFront(api, service.id, id as string);
    await waitHealthy(api, front.id, target(front.port), app.deadlines.startMs);
    return { containerId: id as string, running: { pid, port: front.port, revision: service.revision, publishedHost: host } };
  }
}

/** A migrate command that failed or ran out of time: its reason, which the caller ends with what became of the service. */
class MigrateFailed extends DriverError {}

function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : error instanceof Error && 'reason' in error ? String(error.reason) : 'an internal error').replace(/\.$/, '');
}
