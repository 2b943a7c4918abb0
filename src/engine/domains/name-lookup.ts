// Where a name points, asked of the resolver TEAMINFRA_DNS_SERVER names (host:port; default the
// system's), for the sentence a failed certificate's reason becomes: what the team must fix.
import { Resolver } from 'node:dns/promises';

export function resolverFromEnv(env: NodeJS.ProcessEnv = process.env): Resolver {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  if (env.TEAMINFRA_DNS_SERVER) resolver.setServers([env.TEAMINFRA_DNS_SERVER]);
  return resolver;
}

/** The name's IPv4 and IPv6 addresses; none when it does not resolve. */
export async function addressesOf(resolver: Resolver, name: string): Promise<string[]> {
  const [v4, v6] = await Promise.all([resolver.resolve4(name).catch(() => [] as string[]), resolver.resolve6(name).catch(() => [] as string[])]);
  return [...v4, ...v6];
}

/**
 * A failed certificate's reason, in words a team acts on: the name does not resolve, or points
 * elsewhere than the server (its base domain's addresses); else the CA's own verdict.
 */
export function certificateFailureReason(caError: string, nameAddresses: string[], serverAddresses: string[]): string {
  const server = serverAddresses.length > 0 ? ` (${serverAddresses.join(', ')})` : '';
  if (nameAddresses.length === 0) return `The name does not resolve: give it an A or AAAA record pointing at this server${server}.`;
  if (serverAddresses.length > 0 && !nameAddresses.some((address) => serverAddresses.includes(address))) {
    return `The name does not point at this server (${nameAddresses.join(', ')}); point it at ${serverAddresses.join(', ')}.`;
  }
  // The CA's words without the protocol's wrapping ("HTTP 400 urn:ietf:params:acme:error:...").
  const verdict = caError.replace(/^.*?urn:ietf:params:acme:error:[a-zA-Z]+ - /, '').replace(/\s+/g, ' ').trim().slice(0, 300);
  return `The certificate authority refused the name: ${verdict}`;
}
