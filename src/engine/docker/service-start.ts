// Starting a Docker service's definition, and redeploying it. Every container of the definition
// in its order, for one revision: the front on the service's port, each other container (the
// database) adopted whatever revision made it, the definition's migrate command before the web
// container of a new revision first exists, and that web container, healthy, the one the front
// forwards to. A redeploy runs the definition as it is now beside the revision serving and
// switches the front once it answers; any failure before the switch leaves the revision before
// serving, untouched, and says so.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppContainer, AppDefinition } from '../apps/app-definition.js';
import { ensurePlatformDomain } from '../domains/platform-name.js';
import { DriverError, type ProxyTarget, type RunningService, type ServiceSpec, type StartHooks } from '../driver.js';
import {
  createAppContainer, listAppContainers, runAppCommand, waitEngineHealthy, type AppContainerSummary,
} from './app-containers.js';
import { containerPid, keepRunning, removeContainer, startContainer, startOnEnginePort, stopContainer, waitHealthy } from './containers.js';
import type { DockerApi } from './docker-api.js';
import type { DockerDriverOptions } from './docker-driver-options.js';
import { publishedHost } from './engine-address.js';
import { appCommandContainerName, appContainerName, appNetworkName } from './labels.js';
import { mailRelayOf } from './mail-relay-of.js';
import { choosePort } from './ports.js';
import { waitHealthyThroughProxy } from './proxy/health-probe.js';
import { joinProxyNetwork, rejoinProxyNetwork } from './proxy/proxy-container.js';
import { httpsAddressOf, PROXY_DRAIN_MS, routeServer, servedByProxy } from './proxy/route-server.js';
import { ensureFront, findFront, removeFront, switchFront } from './service-front.js';
import {
  containerSettings, currentGeneration, definitionOf, ensureNetworkAndVolumes, schemaIsCurrent, valuesOf, type Rendered,
} from './service-definition.js';
import { ensureServiceImages } from './service-images.js';
import { staleContainer } from './stale-container.js';

export async function startService(options: DockerDriverOptions, service: ServiceSpec, hooks: StartHooks): Promise<RunningService> {
  const app = await definitionOf(options, service);
  await ensureServiceImages(options, service, app);
  const { api } = options.engines.engineOf(service.server);
  const generation = await currentGeneration(options, service);
  await ensureNetworkAndVolumes(api, service, app, generation);
  await retireUnfronted(options, api, service, app);
  const listed = await listAppContainers(api, service.id);
  // The containers of the data a restore replaced go first: they mount volumes the service no
  // longer uses. So does another revision's web container (a crash's leftover): after a start,
  // this revision serves.
  const stale = (container: AppContainerSummary) => container.generation !== generation
    || (container.appService === app.web.service && container.revision !== service.revision);
  for (const container of listed.filter(stale)) await removeContainer(api, container.id);
  try {
    const { running } = await runRevision(options, api, service, app, listed.filter((container) => !stale(container)), hooks, generation);
    return running;
  } catch (error) {
    if (error instanceof MigrateFailed) throw new DriverError(`${error.reason}, so the service was not started.`, false, { cause: error });
    throw error;
  }
}

/**
 * Runs `revision` from the definition as it is now (an operator's `admin add-app --replace` with
 * a new image tag, a newer image its registry has under the same tag, or a new server image):
 * the database kept as it runs, the migrate command of the new image with the definition's own
 * deadline, the new web container beside the one serving, and the front switched to it once it answers.
 */
export async function redeployService(options: DockerDriverOptions, service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService> {
  // The definition's own names, pulled again: a redeploy takes the newest image under each tag.
  const app = await definitionOf(options, service, 'latest');
  const images = await ensureServiceImages(options, service, app, { latest: true, record: false });
  const { api } = options.engines.engineOf(service.server);
  const generation = await currentGeneration(options, service);
  await ensureNetworkAndVolumes(api, service, app, generation);
  await retireUnfronted(options, api, service, app);
  const before = (await listAppContainers(api, service.id)).filter((container) => container.generation === generation);
  const webOf = (container: AppContainerSummary) => container.appService === app.web.service;
  const serving = before.filter((container) => webOf(container) && container.running && container.revision !== revision)
    .sort((a, b) => b.revision - a.revision);
  let started: { containerId: string; running: RunningService };
  try {
    started = await runRevision(options, api, { ...service, revision }, app, before, hooks, generation);
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
  // The proxy sends new requests to the new revision already; those it sent before end first.
  if (started.running.proxy && others.some((container) => container.running)) await sleep(PROXY_DRAIN_MS);
  for (const container of others) await removeContainer(api, container.id);
  await images.record();
  return started.running;
}

/**
 * Every container of the definition in its order, for `service.revision`: the front on the
 * service's port, each other container adopted, and the web container of this revision.
 */
async function runRevision(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, before: AppContainerSummary[], hooks: StartHooks, generation: number,
): Promise<{ containerId: string; running: RunningService }> {
  const { address } = options.engines.engineOf(service.server);
  const host = publishedHost(address);
  const way = await wayInOf(options, api, service, app, hooks);
  // Rendered with the address people use, for links the app writes in its emails; every
  // container may send mail, so each has the relay's name pinned to the address checked now.
  const smtp = await mailRelayOf(options, service);
  const publicUrl = way.kind === 'proxy' ? `https://${way.name}${way.port === 443 ? '' : `:${way.port}`}` : undefined;
  const rendered = { values: await valuesOf(options, service, host, way.port, smtp, publicUrl), hosts: smtp?.pinnedHosts ?? [] };
  let result: { containerId: string; running: RunningService } | undefined;
  for (const container of app.containers) {
    if (container.name === app.web.service) {
      const existing = before.find((each) => each.appService === container.name && each.revision === service.revision);
      result = await startWeb(options, api, service, app, { container, existing, generation }, hooks, rendered, way);
    } else {
      await startSupporting(options, api, service, app, container, await adopted(api, before, container.name), rendered, generation, timedBy(hooks));
    }
  }
  if (!result) throw new DriverError(`The app ${app.name} has no web container named ${app.web.service}.`);
  for (const container of await listAppContainers(api, service.id)) if (container.running) await keepRunning(api, container.id);
  return result;
}

/** The container of a supporting service (the database) to keep: the running one, else the newest. Any other goes: two database servers must never open the same volume. */
async function adopted(api: DockerApi, before: AppContainerSummary[], appService: string): Promise<AppContainerSummary | undefined> {
  const candidates = before.filter((each) => each.appService === appService)
    .sort((a, b) => Number(b.running) - Number(a.running) || b.revision - a.revision);
  for (const extra of candidates.slice(1)) await removeContainer(api, extra.id);
  return candidates[0];
}

/**
 * How people reach the service: through its server's proxy at its first name once it has one
 * (route-server.ts), else through its own front on the service's port (made now if missing).
 */
async function wayInOf(options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, hooks: StartHooks): Promise<WayIn> {
  if (await servedByProxy(options.db, service.id, service.server.id)) {
    await ensurePlatformDomain(options.db, { id: service.id, name: service.name, server_id: service.server.id });
    // The proxy running (made if missing) before anything is asked through it.
    await routeServer(options, service.server);
    return { kind: 'proxy', ...await httpsAddressOf(options.db, service.id, service.server.id) };
  }
  const { address } = options.engines.engineOf(service.server);
  const front = await ensureFront(api, {
    serviceId: service.id, serverId: service.server.id, image: await options.engines.frontImageOf(service.server),
    port: service.port, targetPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '',
    choosePort: async () => choosePort(address, await options.takenPorts()), portAssigned: (port) => hooks.portAssigned(port),
  });
  return { kind: 'front', id: front.id, port: front.port };
}

type WayIn = { kind: 'front'; id: string; port: number } | { kind: 'proxy'; name: string; port: number };

/**
 * A service last started before fronts existed has its web container published on the service's
 * port itself, which the front needs: that container goes now (the one time the service does
 * not answer while it is started again), and the next start runs behind a front. A service its
 * server's proxy serves needs neither.
 */
async function retireUnfronted(options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition): Promise<void> {
  if (await findFront(api, service.id) || await servedByProxy(options.db, service.id, service.server.id)) return;
  for (const container of await listAppContainers(api, service.id)) {
    if (container.appService === app.web.service) await removeContainer(api, container.id);
  }
}

/** A container other than the web one (the database): running, and healthy when it has a healthcheck (a step of its own in a start). */
export async function startSupporting(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, container: AppContainer,
  existing: AppContainerSummary | undefined, { values, hosts }: Rendered, generation: number, timed: Timed = untimed,
): Promise<string> {
  const id = existing?.id ?? await createAppContainer(api, {
    ...containerSettings(service, app, container, values, generation, appNetworkName(service.id), hosts),
    name: appContainerName(service.id, service.revision, container.name, generation),
  });
  if (!existing?.running) await startContainer(api, id);
  if (container.healthcheck) {
    await timed(`Waited for the ${container.name} container to be healthy`, () => waitEngineHealthy(api, id, container.name, app.deadlines.startMs));
  }
  return id;
}

/**
 * The definition's migrate command, in a container of the revision's image, within the migrate
 * deadline (not the start's). The container is kept, exited, until the next migration (or the
 * data it ran on goes): its output stays in the service's logs as `<service>:migrate`.
 */
async function migrate(api: DockerApi, service: ServiceSpec, app: AppDefinition, { values, hosts }: Rendered, generation: number): Promise<void> {
  const command = app.commands.migrate!;
  const container = app.containers.find((each) => each.name === command.service)!;
  const logAs = migrateLogName(command.service);
  for (const earlier of await listAppContainers(api, service.id)) if (earlier.appService === logAs) await removeContainer(api, earlier.id);
  const { exitCode, output } = await runAppCommand(api, {
    ...containerSettings(service, app, container, values, generation, appNetworkName(service.id), hosts),
    command, what: `The app's migrate command`, timeoutMs: app.deadlines.migrateMs,
    keepAs: { name: appCommandContainerName(service.id, service.revision, 'migrate', generation), appService: logAs, revision: service.revision, generation },
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
async function startWeb(
  options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition,
  web: { container: AppContainer; existing: AppContainerSummary | undefined; generation: number },
  hooks: StartHooks, rendered: Rendered, way: WayIn,
): Promise<{ containerId: string; running: RunningService }> {
  const { container, existing, generation } = web;
  const settings = (image: string) => containerSettings(service, app, { ...container, image }, rendered.values, generation, appNetworkName(service.id), rendered.hosts);
  const { address } = options.engines.engineOf(service.server);
  const host = publishedHost(address);
  const target = (port: number) => ({ host, port, path: app.web.healthPath, serviceId: service.id });
  // Behind the proxy a web container is published on no port: its health is asked from the
  // proxy's container, over the proxy's network, under its own name.
  const probe = (name: string) => ({ serverId: service.server.id, upstream: `${name}:${app.web.port}`, path: app.web.healthPath, serviceId: service.id });
  let id = existing?.id;
  let pid: number | null = null;
  if (existing?.running && way.kind === 'proxy') {
    await joinProxyNetwork(api, service.server.id, existing.id, existing.name);
    pid = await waitHealthyThroughProxy(api, existing.id, probe(existing.name), app.deadlines.startMs).catch(() => null);
  } else if (existing?.running && existing.port !== null) {
    pid = await waitHealthy(api, existing.id, target(existing.port), app.deadlines.startMs).catch(() => null);
  }
  // A stopped web container made with another relay, address or limits than the service has
  // now is made again, from the image it was made from; its revision's migration ran before it
  // was first made, so none runs for it.
  let image = container.image;
  if (pid === null && existing && !existing.running) {
    const stale = await staleContainer(api, existing.id, settings(container.image));
    if (stale) {
      await removeContainer(api, existing.id);
      id = undefined;
      image = stale.image;
    }
  }
  if (pid === null) {
    // Before the web container of this revision first exists: the database is made, or upgraded
    // by a new image, unless a restore or copy filled it with data the same image made.
    if (existing === undefined && app.commands.migrate && !(await schemaIsCurrent(api, service, app, generation))) {
      await timedBy(hooks)(`Ran the app's migrate command`, () => migrate(api, service, app, rendered, generation),
        `Its output is in the service's logs as the container ${migrateLogName(app.commands.migrate.service)}.`);
    }
    const name = appContainerName(service.id, service.revision, container.name, generation);
    id ??= await createAppContainer(api, {
      ...settings(image), name,
      ...(way.kind === 'front' ? { publish: { containerPort: app.web.port, bindAddress: address.kind === 'unix' ? '127.0.0.1' : '', hostPort: null } } : {}),
    });
    const healthy = way.kind === 'proxy'
      ? await startForProxy(api, service, id, name, (made) => waitHealthyThroughProxy(api, made, probe(name), app.deadlines.startMs))
      : await startOnEnginePort(api, id, app.web.port).then((published) => () => waitHealthy(api, id as string, target(published), app.deadlines.startMs));
    await hooks.spawned((await containerPid(api, id)).pid);
    try {
      pid = await timedBy(hooks)(`Waited for the ${container.name} container to answer ${app.web.healthPath}`, healthy);
    } catch (error) {
      await stopContainer(api, id, options.stopGraceMs).catch(() => undefined);
      throw error;
    }
  }
  if (way.kind === 'proxy') {
    const proxy = await switchProxy(options, api, service, app, id as string);
    return { containerId: id as string, running: { pid, port: way.port, revision: service.revision, publishedHost: way.name, proxy } };
  }
  await switchFront(api, service.id, id as string, options.stopGraceMs);
  await waitHealthy(api, way.id, target(way.port), app.deadlines.startMs);
  return { containerId: id as string, running: { pid, port: way.port, revision: service.revision, publishedHost: host } };
}

/**
 * The server's proxy sends the service's requests to `containerId` (healthy already), reached on
 * the proxy's network by its container name; the front it had before it had a name goes once
 * the proxy serves it. The revision before is removed by the caller after this: Caddy finishes
 * the requests it had sent there under the configuration before.
 */
async function switchProxy(options: DockerDriverOptions, api: DockerApi, service: ServiceSpec, app: AppDefinition, containerId: string): Promise<ProxyTarget> {
  const inspected = await api.json<{ Name: string }>('GET', `/containers/${containerId}/json`);
  const alias = inspected.Name.replace(/^\//, '');
  // The proxy may hold requests for a name no running container has (a restore's swap,
  // proxy/hold-requests.ts): this one answers under that name too, so they are served here.
  const before = (await options.db.selectFrom('erp_services').select('proxy_upstream').where('id', '=', service.id).executeTakeFirst())?.proxy_upstream?.split(':')[0];
  const inherited = before && before !== alias && !(await listAppContainers(api, service.id)).some((each) => each.name === before && each.running) ? [before] : [];
  if (inherited.length > 0) await rejoinProxyNetwork(api, service.server.id, containerId, [alias, ...inherited]);
  else await joinProxyNetwork(api, service.server.id, containerId, alias);
  const target = { upstream: `${alias}:${app.web.port}`, healthPath: app.web.healthPath };
  await routeServer(options, service.server, { serviceId: service.id, target });
  await removeFront(api, service.id);
  return target;
}

/** Starts a web container the proxy will reach on its network, joined to it under its own name; answers how to wait for its health. */
async function startForProxy(
  api: DockerApi, service: ServiceSpec, id: string, name: string, waitFor: (id: string) => Promise<number>,
): Promise<() => Promise<number>> {
  await startContainer(api, id);
  await joinProxyNetwork(api, service.server.id, id, name);
  return () => waitFor(id);
}

/** Runs one part of a start as a step of its own (StartHooks.timed). */
export type Timed = <T>(step: string, work: () => Promise<T>, detail?: string) => Promise<T>;
export const untimed: Timed = (_step, work) => work();

function timedBy(hooks: StartHooks): Timed {
  return hooks.timed ? (step, work, detail) => hooks.timed!(step, work, detail) : untimed;
}

/** How the logs name the kept container of an app's migrate command: never a Compose service name (those have no colon). */
function migrateLogName(service: string): string {
  return `${service}:migrate`;
}

/** A migrate command that failed or ran out of time: its reason, which the caller ends with what became of the service. */
class MigrateFailed extends DriverError {}

export function reasonOf(error: unknown): string {
  return (error instanceof DriverError ? error.reason : error instanceof Error && 'reason' in error ? String(error.reason) : 'an internal error').replace(/\.$/, '');
}
