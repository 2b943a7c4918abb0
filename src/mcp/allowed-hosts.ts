// DNS-rebinding protection for /mcp. A web page on evil.example can make a browser send
// requests to a server on the user's machine under the page's own host name; refusing any Host
// (and Origin) that is not ours stops that before authentication is even attempted.
// Ours: loopback names, the IP address the connection actually arrived on (an IP literal cannot
// be rebound), and the host names the operator configured.
import { isIP } from 'node:net';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface HostPolicy {
  /** Lower-case host names without port, e.g. "panel.example.com". */
  readonly configured: ReadonlySet<string>;
}

/** Configured names from the server options, else TEAMINFRA_ALLOWED_HOSTS (comma-separated). */
export function hostPolicyOf(allowedHosts?: readonly string[], env = process.env.TEAMINFRA_ALLOWED_HOSTS): HostPolicy {
  const names = allowedHosts ?? (env ? env.split(',') : []);
  return { configured: new Set(names.map((name) => name.trim().toLowerCase()).filter((name) => name.length > 0)) };
}

/** A sentence saying what is refused, or undefined when Host and Origin are both ours. */
export function hostRefusal(
  policy: HostPolicy, host: string | undefined, origin: string | undefined, localAddress: string | undefined,
): string | undefined {
  if (!isOurs(policy, host ? hostnameOf(`http://${host}`) : undefined, localAddress)) {
    return `The Host header ${JSON.stringify(host ?? '')} is not a name of this server. ` +
      'Use its configured address; an operator can allow more names with TEAMINFRA_ALLOWED_HOSTS.';
  }
  if (origin !== undefined && !isOurs(policy, hostnameOf(origin), localAddress)) {
    return `Requests from the web page at ${JSON.stringify(origin)} are not accepted by the MCP endpoint.`;
  }
  return undefined;
}

function isOurs(policy: HostPolicy, hostname: string | undefined, localAddress: string | undefined): boolean {
  if (hostname === undefined) return false;
  if (LOOPBACK.has(hostname) || policy.configured.has(hostname)) return true;
  const literal = hostname.replace(/^\[|\]$/g, '');
  return isIP(literal) !== 0 && localAddress !== undefined && literal === localAddress.replace(/^::ffff:/, '');
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}
