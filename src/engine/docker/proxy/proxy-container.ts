// A server's reverse proxy: one Caddy container per engine, published on the ports the operator
// chose (80 and 443 by default), on a network of its own that each service's web container
// joins. The proxy reaches a service only over that network, by container name; a service is
// never published for the proxy's sake. Its volume keeps the certificates (so a restart or a
// new container does not ask the CA again) and Caddy's last configuration (so it serves while
// teaminfra is away); the configuration itself is always rebuilt from the database and pushed
// through the admin API (caddy-admin.ts), which only the engine's API reaches.
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverError } from '../../driver.js';
import { ensureNetwork } from '../app-containers.js';
import { ensureVolume, removeContainer, startContainer, stopContainer } from '../containers.js';
import type { DockerApi } from '../docker-api.js';
import { LABEL, labelsOf } from '../labels.js';
import { CaddyAdmin, textFileTar } from './caddy-admin.js';
import { CONTAINER_HTTP_PORT, CONTAINER_HTTPS_PORT } from './caddy-config.js';
import { ensureProxyImage, PROXY_ADMIN_SOCKET, PROXY_IMAGE, PROXY_STATE_DIR } from './proxy-image.js';

export const PROXY_ROLE = 'proxy';
/** Where the ACME directory's CA root (TEAMINFRA_ACME_CA_ROOT) is put in the container: caddy-config.ts names it. */
export const CONTAINER_ACME_CA_ROOT = `${PROXY_ADMIN_SOCKET.slice(0, PROXY_ADMIN_SOCKET.lastIndexOf('/'))}/acme-ca-root.pem`;
/** Caddy serving a few hundred names needs far less; the server's limits for services are not spent on it. */
const PROXY_MEMORY_BYTES = 256 * 1024 * 1024;
const ADMIN_READY_TIMEOUT_MS = 30_000;

export interface ProxySpec {
  serverId: string;
  /** The host ports, 80 and 443 unless the operator chose others (admin set-server-proxy). */
  httpPort: number;
  httpsPort: number;
  /** '' (every interface) for a real server; 127.0.0.1 to keep a test's proxy on loopback. */
  bindAddress: string;
  /** The PEM of TEAMINFRA_ACME_CA_ROOT, or null to trust the system's roots only. */
  acmeCaRootPem: string | null;
}

export const proxyContainerName = (serverId: string) => `teaminfra-proxy-${serverId}`;
/** The network a service's web container joins to be reached by the proxy. */
export const proxyNetworkName = (serverId: string) => `teaminfra-proxy-${serverId}`;
export const proxyVolumeName = (serverId: string) => `teaminfra-proxy-${serverId}`;

interface InspectedProxy {
  Id: string;
  State: { Running: boolean };
  HostConfig: { PortBindings: Record<string, { HostIp: string; HostPort: string }[] | null> | null };
}

/**
 * The proxy running with `spec`'s ports and its admin API answering: made when missing, made
 * again when the operator changed its ports (certificates stay in the volume), started when
 * stopped. The admin client it answers is how its configuration is pushed.
 */
export async function ensureProxy(api: DockerApi, spec: ProxySpec, log: (line: string) => void = () => undefined): Promise<CaddyAdmin> {
  await ensureProxyImage(api, log);
  await ensureNetwork(api, proxyNetworkName(spec.serverId), labelsOf({ serverId: spec.serverId, role: 'network' }));
  await ensureVolume(api, proxyVolumeName(spec.serverId), proxyLabels(spec.serverId));
  let existing = await inspectProxy(api, spec.serverId);
  if (existing && !publishedAs(existing, spec)) {
    await removeContainer(api, existing.Id);
    existing = undefined;
  }
  const id = existing?.Id ?? await createProxy(api, spec);
  // Before every start: a container made again, or a CA root the operator changed, is current.
  await api.upload('PUT', `/containers/${id}/archive`, textFileTar(CONTAINER_ACME_CA_ROOT.slice(CONTAINER_ACME_CA_ROOT.lastIndexOf('/') + 1), spec.acmeCaRootPem ?? ''), 'application/x-tar',
    { query: { path: CONTAINER_ACME_CA_ROOT.slice(0, CONTAINER_ACME_CA_ROOT.lastIndexOf('/')) } });
  if (!existing?.State.Running) await startContainer(api, id);
  const admin = new CaddyAdmin(api, id);
  await waitForAdmin(admin);
  return admin;
}

/** The admin client of the server's proxy, if it exists (it may be stopped: its calls then fail). */
export async function proxyAdmin(api: DockerApi, serverId: string): Promise<CaddyAdmin | undefined> {
  const existing = await inspectProxy(api, serverId);
  return existing ? new CaddyAdmin(api, existing.Id) : undefined;
}

export async function stopProxy(api: DockerApi, serverId: string, graceMs = 10_000): Promise<void> {
  await stopContainer(api, proxyContainerName(serverId), graceMs);
}

/** The container and its network; the volume (certificates) is kept unless `withVolume`. */
export async function removeProxy(api: DockerApi, serverId: string, options: { withVolume?: boolean } = {}): Promise<void> {
  await removeContainer(api, proxyContainerName(serverId));
  await api.json('DELETE', `/networks/${proxyNetworkName(serverId)}`, { accept: [404, 409] });
  if (options.withVolume) await api.json('DELETE', `/volumes/${proxyVolumeName(serverId)}`, { accept: [404] });
}

/** Joins a service's web container to the proxy's network under `alias` (its upstream host; more names when given several), idempotently. */
export async function joinProxyNetwork(api: DockerApi, serverId: string, containerId: string, alias: string | readonly string[]): Promise<void> {
  // Before the proxy itself exists (the first service of a server that just got a name), made now.
  await ensureNetwork(api, proxyNetworkName(serverId), labelsOf({ serverId, role: 'network' }));
  const network = await api.json<{ Containers: Record<string, unknown> | null }>('GET', `/networks/${proxyNetworkName(serverId)}`);
  if (Object.keys(network.Containers ?? {}).includes(containerId)) return;
  await api.json('POST', `/networks/${proxyNetworkName(serverId)}/connect`, {
    body: { Container: containerId, EndpointConfig: { Aliases: typeof alias === 'string' ? [alias] : [...alias] } }, accept: [403],
  });
}

/** Joins it again under `aliases` (a restore's container taking the name of the one before too): out of the network, then in. */
export async function rejoinProxyNetwork(api: DockerApi, serverId: string, containerId: string, aliases: readonly string[]): Promise<void> {
  await api.json('POST', `/networks/${proxyNetworkName(serverId)}/disconnect`, { body: { Container: containerId, Force: true }, accept: [404] });
  await api.json('POST', `/networks/${proxyNetworkName(serverId)}/connect`, { body: { Container: containerId, EndpointConfig: { Aliases: [...aliases] } } });
}

function proxyLabels(serverId: string): Record<string, string> {
  return { [LABEL.serverId]: serverId, [LABEL.role]: PROXY_ROLE };
}

async function inspectProxy(api: DockerApi, serverId: string): Promise<InspectedProxy | undefined> {
  const inspected = await api.json<(InspectedProxy & { Config: { Labels: Record<string, string> } }) | undefined>(
    'GET', `/containers/${proxyContainerName(serverId)}/json`, { accept: [404] });
  if (inspected && inspected.Config.Labels[LABEL.serverId] !== serverId) {
    throw new DriverError(`A container named ${proxyContainerName(serverId)} that teaminfra did not create exists on the engine; rename or remove it.`);
  }
  return inspected;
}

function publishedAs(inspected: InspectedProxy, spec: ProxySpec): boolean {
  const bound = (port: number) => inspected.HostConfig.PortBindings?.[`${port}/tcp`]?.[0];
  const http = bound(CONTAINER_HTTP_PORT);
  const https = bound(CONTAINER_HTTPS_PORT);
  return http?.HostPort === String(spec.httpPort) && https?.HostPort === String(spec.httpsPort) && http.HostIp === spec.bindAddress;
}

async function createProxy(api: DockerApi, spec: ProxySpec): Promise<string> {
  const binding = (port: number) => [{ HostIp: spec.bindAddress, HostPort: String(port) }];
  const created = await api.json<{ Id: string }>('POST', '/containers/create', {
    query: { name: proxyContainerName(spec.serverId) },
    body: {
      Image: PROXY_IMAGE, Labels: proxyLabels(spec.serverId),
      ExposedPorts: { [`${CONTAINER_HTTP_PORT}/tcp`]: {}, [`${CONTAINER_HTTPS_PORT}/tcp`]: {} },
      HostConfig: {
        NetworkMode: proxyNetworkName(spec.serverId),
        PortBindings: { [`${CONTAINER_HTTP_PORT}/tcp`]: binding(spec.httpPort), [`${CONTAINER_HTTPS_PORT}/tcp`]: binding(spec.httpsPort) },
        Mounts: [{ Type: 'volume', Source: proxyVolumeName(spec.serverId), Target: PROXY_STATE_DIR }],
        // Caddy runs as its own user, with no capability: ports 80 and 443 are ordinary ports in
        // its own network namespace, nothing more.
        Sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' },
        CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'],
        // An ACME directory on the engine's own host (a test CA) is reached by this name.
        ExtraHosts: ['host.docker.internal:host-gateway'],
        RestartPolicy: { Name: 'unless-stopped' },
        Memory: PROXY_MEMORY_BYTES, MemorySwap: PROXY_MEMORY_BYTES,
      },
    },
  });
  return created.Id;
}

async function waitForAdmin(admin: CaddyAdmin): Promise<void> {
  const deadline = Date.now() + ADMIN_READY_TIMEOUT_MS;
  for (;;) {
    try {
      await admin.config();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new DriverError(`The proxy did not answer on its admin API within ${ADMIN_READY_TIMEOUT_MS / 1000} s: ${(error as Error).message}`);
    }
    await sleep(100);
  }
}
