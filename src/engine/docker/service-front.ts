// The front of a Docker service: one small container per service, published on the service's
// port, that forwards every connection to the revision that is current (src/engine/front/
// tcp-front.ts). Revisions come and go beside it, each published on a port the engine picks
// (only the driver's health checks use it); the front, and so the service's url, stays. A
// switch is two engine calls on the service's front network: connect the new revision's
// container with the alias `current`, then disconnect the old one. In between both answer to
// that name, so there is no moment when nothing serves.
import { DriverError, type ServiceStatus } from '../driver.js';
import { ensureNetwork } from './app-containers.js';
import { answersHealth, containerPid, removeContainer, startPublished, stopContainer } from './containers.js';
import type { DockerApi } from './docker-api.js';
import { frontContainerName, frontNetworkName, labelsOf } from './labels.js';

/** The port the front listens on inside its container. */
export const FRONT_PORT = 8080;
const FRONT_COMMAND = ['/usr/local/bin/node', '/app/dist/src/engine/front/tcp-front.js'];
/** A Node process forwarding sockets: far below any ERP's needs, so the server's limits are not spent on it. */
const FRONT_MEMORY_BYTES = 128 * 1024 * 1024;
const TARGET_ALIAS = 'current';

export interface FrontSpec {
  serviceId: string;
  serverId: string;
  /** The bundled ERP image, which holds the front's program (erp-image.ts). */
  image: string;
  /** The service's port; null: choose one. */
  port: number | null;
  /** The port its revisions' web container listens on. */
  targetPort: number;
  /** 127.0.0.1 for an engine on this machine; '' (every interface) for a remote one. */
  bindAddress: string;
  choosePort(): Promise<number>;
  portAssigned(port: number): Promise<void>;
}

export interface Front {
  id: string;
  running: boolean;
  /** The host port it is published on (kept while it is stopped). */
  port: number | null;
  targetPort: number | null;
}

interface InspectedFront {
  Id: string;
  State: { Running: boolean };
  Config: { Env: string[] | null; Labels: Record<string, string> };
  HostConfig: { PortBindings: Record<string, { HostPort: string }[] | null> | null };
}

export async function findFront(api: DockerApi, serviceId: string): Promise<Front | undefined> {
  const inspected = await api.json<InspectedFront | undefined>('GET', `/containers/${frontContainerName(serviceId)}/json`, { accept: [404] });
  if (!inspected) return undefined;
  const hostPort = inspected.HostConfig.PortBindings?.[`${FRONT_PORT}/tcp`]?.[0]?.HostPort;
  const target = (inspected.Config.Env ?? []).find((entry) => entry.startsWith('TEAMINFRA_FRONT_TARGET_PORT='))?.split('=')[1];
  return {
    id: inspected.Id, running: inspected.State.Running, port: hostPort ? Number(hostPort) : null, targetPort: target ? Number(target) : null,
  };
}

/**
 * The front running on the service's port (the one it was published on before, else
 * `spec.port`, else a chosen one), made when missing. A front for another target port (the
 * app's definition changed its web port) is made again on the same port.
 */
export async function ensureFront(api: DockerApi, spec: FrontSpec): Promise<{ id: string; port: number }> {
  await ensureNetwork(api, frontNetworkName(spec.serviceId), labelsOf({ serviceId: spec.serviceId, serverId: spec.serverId, role: 'network' }));
  let existing = await findFront(api, spec.serviceId);
  const port = existing?.port ?? spec.port;
  if (existing && existing.targetPort !== spec.targetPort) {
    await removeContainer(api, existing.id);
    existing = undefined;
  }
  const { id, published } = await startPublished(api, {
    existingId: existing?.id, port, containerPort: FRONT_PORT, choosePort: spec.choosePort, portAssigned: spec.portAssigned,
    create: (hostPort) => createFront(api, spec, hostPort),
  });
  return { id, port: published };
}

async function createFront(api: DockerApi, spec: FrontSpec, hostPort: number): Promise<string> {
  const name = frontContainerName(spec.serviceId);
  const portKey = `${FRONT_PORT}/tcp`;
  const created = await api.json<{ Id: string } | undefined>('POST', '/containers/create', {
    query: { name }, accept: [409],
    body: {
      Image: spec.image, Entrypoint: [FRONT_COMMAND[0]], Cmd: FRONT_COMMAND.slice(1), User: '65534:65534',
      Env: [`TEAMINFRA_FRONT_TARGET_PORT=${spec.targetPort}`],
      Labels: labelsOf({ serviceId: spec.serviceId, serverId: spec.serverId, role: 'front' }),
      ExposedPorts: { [portKey]: {} },
      HostConfig: {
        NetworkMode: frontNetworkName(spec.serviceId),
        PortBindings: { [portKey]: [{ HostIp: spec.bindAddress, HostPort: String(hostPort) }] },
        // It holds no state: it comes back with its engine, unless the team stopped the service.
        RestartPolicy: { Name: 'unless-stopped' },
        Memory: FRONT_MEMORY_BYTES, MemorySwap: FRONT_MEMORY_BYTES,
      },
    },
  });
  if (created) return created.Id;
  const existing = await api.json<{ Id: string; Config: { Labels: Record<string, string> } }>('GET', `/containers/${name}/json`);
  if (existing.Config.Labels['io.teaminfra.service-id'] !== spec.serviceId) {
    throw new DriverError(`A container named ${name} that teaminfra did not create exists on the engine; rename or remove it.`);
  }
  return existing.Id;
}

/** The ids of the containers the front forwards to now (normally one; two for the instant of a switch). */
export async function currentTargets(api: DockerApi, serviceId: string): Promise<string[]> {
  const network = await api.json<{ Containers: Record<string, unknown> | null } | undefined>(
    'GET', `/networks/${frontNetworkName(serviceId)}`, { accept: [404] });
  const front = await findFront(api, serviceId);
  return Object.keys(network?.Containers ?? {}).filter((id) => id !== front?.id);
}

/** Makes `containerId` the one the front forwards to: connected first, the others stopped and disconnected after. */
export async function switchFront(api: DockerApi, serviceId: string, containerId: string, stopGraceMs: number): Promise<void> {
  const network = frontNetworkName(serviceId);
  const before = await currentTargets(api, serviceId);
  if (!before.includes(containerId)) {
    await api.json('POST', `/networks/${network}/connect`, { body: { Container: containerId, EndpointConfig: { Aliases: [TARGET_ALIAS] } } });
  }
  for (const other of before.filter((id) => id !== containerId)) {
    // Stopped while still on the network, so that its app ends its open connections (a keep-alive
    // client's among them) with a FIN the front passes on; disconnected first, those connections
    // would vanish without one and the client's next request would hang on them.
    await stopContainer(api, other, stopGraceMs).catch(() => undefined);
    await api.json('POST', `/networks/${network}/disconnect`, { body: { Container: other, Force: true }, accept: [404] });
  }
}

export async function stopFront(api: DockerApi, serviceId: string, graceMs: number): Promise<void> {
  const front = await findFront(api, serviceId);
  if (front?.running) await stopContainer(api, front.id, graceMs);
}

/** The front container; its network goes with the service's other networks (removeNetworks). */
export async function removeFront(api: DockerApi, serviceId: string): Promise<void> {
  await removeContainer(api, frontContainerName(serviceId));
}

/**
 * What runs, as a team reaches it: running (on the front's port, the revision the front
 * forwards to) while the front answers the health path; starting while a container of the
 * service runs; else stopped. `webContainers`: the service's web containers, every revision.
 */
export async function frontStatus(
  api: DockerApi, serviceId: string, host: string, healthPath: string, webContainers: { id: string; running: boolean; revision: number }[],
): Promise<ServiceStatus> {
  const front = await findFront(api, serviceId);
  if (front?.running && front.port !== null && await answersHealth(host, front.port, healthPath, serviceId)) {
    const targets = await currentTargets(api, serviceId);
    const current = webContainers.filter((container) => container.running && targets.includes(container.id)).sort((a, b) => b.revision - a.revision)[0];
    if (current) return { state: 'running', pid: (await containerPid(api, current.id)).pid, port: front.port, revision: current.revision, publishedHost: host };
  }
  const running = webContainers.find((container) => container.running);
  if (running) return { state: 'starting', pid: (await containerPid(api, running.id)).pid };
  return { state: 'stopped' };
}
