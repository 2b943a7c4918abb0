// Whether a stopped container can be started again as it is: a container keeps the environment,
// hosts and limits it was created with, so one made before the service's mail relay
// (set_outgoing_mail) or the relay's address, the mail catcher's address, its published url or
// its server's limits (admin set-server-limits) changed would start with the old ones. The drivers make such a container again ("takes effect
// at the next start"), from the image it was made from: a revision's image changes only by a
// redeploy, never by a start.
import type { ContainerLimits } from './container-limits.js';
import type { DockerApi } from './docker-api.js';

interface Inspected { Image: string; Config?: { Env?: string[] | null }; HostConfig?: { Memory?: number; NanoCpus?: number; ExtraHosts?: string[] | null } }

/**
 * Undefined when the container was created with every one of `wanted.env` (`NAME=value`) in its
 * environment, every one of `wanted.extraHosts` in its /etc/hosts (the relay's address checked at
 * this start) and with `wanted.limits` (it can be started as it is); else the id of the image it
 * was made from, to make it again.
 */
export async function staleContainer(
  api: DockerApi, containerId: string, wanted: { env: readonly string[]; limits: ContainerLimits; extraHosts: readonly string[] },
): Promise<{ image: string } | undefined> {
  const inspected = await api.json<Inspected | undefined>('GET', `/containers/${containerId}/json`, { accept: [404] });
  if (!inspected) return undefined;
  const env = new Set(inspected.Config?.Env ?? []);
  const hosts = new Set(inspected.HostConfig?.ExtraHosts ?? []);
  const current = wanted.env.every((entry) => env.has(entry)) && wanted.extraHosts.every((entry) => hosts.has(entry))
    && inspected.HostConfig?.Memory === wanted.limits.memoryBytes && inspected.HostConfig?.NanoCpus === wanted.limits.nanoCpus;
  return current ? undefined : { image: inspected.Image };
}
