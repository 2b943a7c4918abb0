// Engine calls for the containers of an app definition (src/engine/apps): the service's own
// bridge network, the containers of its Compose services joined to it under their Compose names,
// the engine's own healthcheck of a container that declares one, and the definition's commands
// as one-off containers on that network (like `docker compose run`). Every object carries our
// labels; every wait has a deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverError } from '../driver.js';
import type { AppCommand, AppContainer } from '../apps/app-definition.js';
import type { ContainerLimits } from './container-limits.js';
import { DockerError, type DockerApi } from './docker-api.js';
import { lastOutput, runHelper } from './containers.js';
import { dataVolumeName, generationOf, LABEL, labelFilter, labelsOf } from './labels.js';
import { newLeaseOwner } from '../lease-owner.js';
import { CONTRACT_SERVICE } from './contract-definition.js';

/** Names this process on the one-off containers it makes, as containers.ts does for helpers. */
const THIS_PROCESS = newLeaseOwner();

export interface AppContainerSummary {
  id: string;
  name: string;
  running: boolean;
  revision: number;
  /** Its Compose service name. */
  appService: string;
  /** The generation of the service's volumes it mounts (0 until a restore; containers made before generations carry none). */
  generation: number;
  port: number | null;
}

interface Listed {
  Id: string; Names: string[]; State: string; Labels: Record<string, string>;
  Ports: { PrivatePort: number; PublicPort?: number }[];
}

export async function listAppContainers(api: DockerApi, serviceId: string): Promise<AppContainerSummary[]> {
  const listed = await api.json<Listed[]>('GET', '/containers/json', {
    query: { all: 1, filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: 'service' }) },
  });
  return listed.map((container) => ({
    id: container.Id, name: (container.Names[0] ?? '').replace(/^\//, ''), running: container.State === 'running',
    // A container without the label was made by the single-container path of earlier versions:
    // the one container of an image contract's definition.
    revision: Number(container.Labels[LABEL.revision] ?? 0), appService: container.Labels[LABEL.appService] ?? CONTRACT_SERVICE,
    generation: generationOf(container.Labels[LABEL.volume] ?? ''),
    port: container.Ports.find((port) => port.PublicPort !== undefined)?.PublicPort ?? null,
  }));
}

/** The service's network, made once; a network of that name we did not make is refused, not joined. */
export async function ensureNetwork(api: DockerApi, name: string, labels: Record<string, string>): Promise<void> {
  const existing = await api.json<{ Labels: Record<string, string> | null } | undefined>('GET', `/networks/${name}`, { accept: [404] });
  if (existing) {
    if (existing.Labels?.[LABEL.role] !== 'network') throw new DriverError(`A network named ${name} that teaminfra did not create exists on the engine; rename or remove it.`);
    return;
  }
  try {
    await api.json('POST', '/networks/create', { body: { Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: labels }, accept: [409] });
  } catch (error) {
    // Docker's default address pools hold about 30 networks, and each service uses two (its own and its front's).
    if (error instanceof DockerError && /non-overlapping IPv4 address pool/.test(error.reason)) {
      throw new DriverError(`The Docker engine at ${api.address.text} has no address range left for a new network: its address pools are ` +
        'used up. The operator gives the engine larger pools ("default-address-pools" in /etc/docker/daemon.json, then restarts dockerd; ' +
        'docs/docker-servers.md), then tries again.', false, { cause: error });
    }
    throw error;
  }
}

export async function removeNetworks(api: DockerApi, serviceId: string): Promise<void> {
  const networks = await api.json<{ Id: string }[]>('GET', '/networks', {
    query: { filters: labelFilter({ [LABEL.serviceId]: serviceId, [LABEL.role]: 'network' }) },
  });
  for (const network of networks) await api.json('DELETE', `/networks/${network.Id}`, { accept: [404] });
}

export interface NewAppContainer {
  name: string;
  serviceId: string;
  serverId: string;
  revision: number;
  container: AppContainer;
  network: string;
  /** Engine volume of each definition volume. */
  volumeOf(volume: string): string;
  env: string[];
  limits: ContainerLimits;
  /** /etc/hosts entries, "name:address", beside host.docker.internal (mail-relay-of.ts: the relay's checked address). */
  extraHosts?: readonly string[];
  /** For the web container: its port published on bindAddress:hostPort (null: a port the engine picks). */
  publish?: { containerPort: number; bindAddress: string; hostPort: number | null };
  /** The generation of the volumes volumeOf names, as a label (listAppContainers' `generation`). */
  generation?: number;
  /**
   * A short-lived container of the service (a restore's staged database): labelled a helper made
   * by this process, so that a crash's leftover is removed (removeAbandonedHelpers) and no list
   * of the service's own containers ever sees it.
   */
  oneOff?: boolean;
}

function hostConfigOf(spec: Pick<NewAppContainer, 'container' | 'network' | 'volumeOf' | 'extraHosts'>, extraMounts: { volume: string; target: string }[] = []) {
  return {
    NetworkMode: spec.network,
    Mounts: [
      ...spec.container.volumes.map((mount) => ({ Type: 'volume', Source: spec.volumeOf(mount.volume), Target: mount.target, ReadOnly: mount.readOnly })),
      ...extraMounts.map((mount) => ({ Type: 'volume', Source: mount.volume, Target: mount.target })),
    ],
    // The mail catcher when it listens on every address (TEAMINFRA_SMTP_HOST=0.0.0.0); the relay's name pinned.
    ExtraHosts: ['host.docker.internal:host-gateway', ...(spec.extraHosts ?? [])],
  };
}

/** Creates the container, or finds the one of that name (a crash after create): never two. */
export async function createAppContainer(api: DockerApi, spec: NewAppContainer): Promise<string> {
  const { container, publish } = spec;
  const portKey = publish ? `${publish.containerPort}/tcp` : undefined;
  const created = await api.json<{ Id: string } | undefined>('POST', '/containers/create', {
    query: { name: spec.name }, accept: [409],
    body: {
      Image: container.image, Env: spec.env,
      ...(container.command ? { Cmd: container.command } : {}),
      ...(container.user ? { User: container.user } : {}),
      Labels: labelsOf({
        serviceId: spec.serviceId, serverId: spec.serverId, revision: spec.revision, appService: container.name,
        volume: dataVolumeName(spec.serviceId, spec.generation ?? 0), ...(spec.oneOff ? { role: 'helper', madeBy: THIS_PROCESS } : { role: 'service' }),
      }),
      ...(portKey ? { ExposedPorts: { [portKey]: {} } } : {}),
      ...(container.healthcheck ? {
        Healthcheck: {
          Test: ['CMD', ...container.healthcheck.test], Interval: container.healthcheck.intervalMs * 1e6,
          Timeout: container.healthcheck.timeoutMs * 1e6, Retries: container.healthcheck.retries,
          StartPeriod: container.healthcheck.startPeriodMs * 1e6,
        },
      } : {}),
      HostConfig: {
        ...hostConfigOf(spec),
        ...(portKey && publish ? { PortBindings: { [portKey]: [{ HostIp: publish.bindAddress, HostPort: publish.hostPort === null ? '' : String(publish.hostPort) }] } } : {}),
        RestartPolicy: { Name: 'no' },
        Memory: spec.limits.memoryBytes, MemorySwap: spec.limits.memoryBytes, NanoCpus: spec.limits.nanoCpus,
      },
      NetworkingConfig: { EndpointsConfig: { [spec.network]: { Aliases: [container.name] } } },
    },
  });
  if (created) return created.Id;
  const existing = await api.json<{ Id: string; Config: { Labels: Record<string, string> } }>('GET', `/containers/${spec.name}/json`);
  if (existing.Config.Labels[LABEL.serviceId] !== spec.serviceId) {
    throw new DriverError(`A container named ${spec.name} that teaminfra did not create exists on the engine; rename or remove it.`);
  }
  return existing.Id;
}

/**
 * Waits until the container's healthcheck passes; fails with its last output if it stops or at
 * the deadline. Between the engine's own probes its test is run here too (an exec, as the
 * engine runs it): the engine runs its first probe only once the healthcheck's interval has
 * passed (30 s unless the definition says otherwise), which a start would otherwise wait out
 * even for a database that is ready in a second.
 */
export async function waitEngineHealthy(api: DockerApi, id: string, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 250)) {
    const inspected = await api.json<{
      State: { Status: string; ExitCode: number; Health?: { Status: string } }; Config: { Healthcheck?: { Test?: string[]; Timeout?: number } };
    }>('GET', `/containers/${id}/json`);
    if (inspected.State.Health?.Status === 'healthy') return;
    if (inspected.State.Status !== 'running') {
      throw new DriverError(`The ${what} container exited (code ${inspected.State.ExitCode}) before it was healthy${await lastOutput(api, id)}.`);
    }
    if (await passesHealthcheck(api, id, inspected.Config.Healthcheck, deadline - Date.now())) return;
    if (Date.now() > deadline) {
      throw new DriverError(`The ${what} container was not healthy within ${Math.round(timeoutMs / 1000)} s${await lastOutput(api, id)}.`);
    }
    await sleep(pause);
  }
}

/** Runs the container's healthcheck test once (the CMD form, the only one definitions take), within its timeout; true when it exits 0. */
async function passesHealthcheck(api: DockerApi, id: string, healthcheck: { Test?: string[]; Timeout?: number } | undefined, leftMs: number): Promise<boolean> {
  const test = healthcheck?.Test;
  if (!test || test[0] !== 'CMD' || test.length < 2 || leftMs <= 0) return false;
  // A container that stopped meanwhile answers 409: the next look at its state says why.
  const exec = await api.json<{ Id: string } | undefined>('POST', `/containers/${id}/exec`, {
    body: { Cmd: test.slice(1), AttachStdout: false, AttachStderr: false }, accept: [409],
  });
  if (!exec) return false;
  await api.json('POST', `/exec/${exec.Id}/start`, { body: { Detach: true }, accept: [409] });
  const ends = Date.now() + Math.min(healthcheck?.Timeout ? healthcheck.Timeout / 1e6 : 30_000, leftMs);
  for (;;) {
    const state = await api.json<{ Running: boolean; ExitCode: number | null }>('GET', `/exec/${exec.Id}/json`);
    if (!state.Running) return state.ExitCode === 0;
    if (Date.now() > ends) return false;
    await sleep(25);
  }
}

/**
 * Runs a definition command as a one-off container of `container` (its image, environment,
 * volumes, user) on the service's network, at most `timeoutMs`; removed afterwards. Labelled a
 * helper of the service, so a delete removes one a crash left behind. With `keepAs` it is kept
 * after it ends instead, labelled one of the service's own containers under that name: its
 * output stays where the logs API reads (observe/docker-logs.ts), and whatever removes the
 * service's containers of a generation (a restore's swap, a delete) removes it too.
 */
export async function runAppCommand(
  api: DockerApi,
  spec: Pick<NewAppContainer, 'serviceId' | 'serverId' | 'container' | 'network' | 'volumeOf' | 'env' | 'extraHosts'> & {
    command: AppCommand; what: string; timeoutMs: number;
    keepAs?: { name: string; appService: string; revision: number; generation: number };
    /**
     * The backup commands' working directory (snapshot, verify, restore name their files
     * relative to it): `prepare` puts files into the created container before it starts, and
     * `collect` reads them from the exited one, before it is removed.
     */
    workDir?: { path: string; prepare(containerId: string): Promise<unknown>; collect?(containerId: string): Promise<unknown> };
  },
): Promise<{ exitCode: number; output: string }> {
  const { keepAs } = spec;
  const created = await api.json<{ Id: string }>('POST', '/containers/create', {
    ...(keepAs ? { query: { name: keepAs.name } } : {}),
    body: {
      // As `docker compose run SERVICE CMD...`: the command replaces the image's CMD, not its
      // entrypoint; an image contract's command replaces both, as its labels say.
      Image: spec.container.image, Env: spec.env,
      ...(spec.command.replacesEntrypoint
        ? { Entrypoint: spec.command.command.slice(0, 1), Cmd: spec.command.command.slice(1) } : { Cmd: spec.command.command }),
      ...((spec.command.user ?? spec.container.user) ? { User: spec.command.user ?? spec.container.user } : {}),
      ...(spec.workDir ? { WorkingDir: spec.workDir.path } : {}),
      Labels: keepAs
        ? labelsOf({
          serviceId: spec.serviceId, serverId: spec.serverId, revision: keepAs.revision, role: 'service', appService: keepAs.appService,
          volume: dataVolumeName(spec.serviceId, keepAs.generation),
        })
        : labelsOf({ serviceId: spec.serviceId, serverId: spec.serverId, role: 'helper', madeBy: THIS_PROCESS }),
      HostConfig: hostConfigOf(spec),
    },
  });
  try {
    await spec.workDir?.prepare(created.Id);
    const ran = await runHelper(api, created.Id, spec.timeoutMs, spec.what);
    if (ran.exitCode === 0) await spec.workDir?.collect?.(created.Id);
    return ran;
  } finally {
    if (!keepAs) await api.json('DELETE', `/containers/${created.Id}`, { query: { force: 1 }, accept: [404] });
  }
}
