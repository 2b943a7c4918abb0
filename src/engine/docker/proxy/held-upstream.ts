// The name a restore has the proxy send a service's requests to while its data is swapped
// (hold-requests.ts): answered by no container until the restored one joins under it. The proxy
// holds requests for it longer than for a container that is there (caddy-config.ts): the swap
// stops the service, takes the safety backup and starts it again, which takes more than an
// instant's switch.

const HELD_SUFFIX = '-restored';

export function heldUpstreamName(serviceId: string): string {
  return `teaminfra-${serviceId}${HELD_SUFFIX}`;
}

/** Whether an upstream (`host:port`) is a held name rather than a container's. */
export function isHeldUpstream(upstream: string): boolean {
  const [host = ''] = upstream.split(':');
  return host.startsWith('teaminfra-') && host.endsWith(HELD_SUFFIX);
}
