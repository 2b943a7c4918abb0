// DNS-rebinding protection for /mcp. A web page on evil.example can make a browser send
// requests to a server on the user's machine under the page's own host name; refusing any Host
// (and Origin) that is not ours stops that before authentication is even attempted.
// Ours: loopback names, the IP address the connection actually arrived on (an IP literal cannot
// be rebound), and the host names the operator configured.
//
// Host and Origin are parsed strictly (RFC 9110 section 7.2: host[:port], nothing else), not with
// the WHATWG URL parser, which is lenient on purpose: it reads "2130706433" as 127.0.0.1 and
// "evil.example@localhost" as localhost, so a value no browser sends would pass as ours.
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost']);
const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1']);

export interface HostPolicy {
  /** Lower-case host names without port, e.g. "panel.example.com". */
  readonly configured: ReadonlySet<string>;
}

/** A Host value taken apart: a DNS name or an IP address (IPv6 without brackets), and the port if given. */
export interface ParsedHost {
  kind: 'name' | 'ipv4' | 'ipv6';
  hostname: string;
  port?: number;
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
  if (!isOurs(policy, host === undefined ? undefined : parseHost(host), localAddress)) {
    return `The Host header ${JSON.stringify(host ?? '')} is not a name of this server. ` +
      'Use its configured address; an operator can allow more names with TEAMINFRA_ALLOWED_HOSTS.';
  }
  if (origin !== undefined && !isOurs(policy, parseOrigin(origin), localAddress)) {
    return `Requests from the web page at ${JSON.stringify(origin)} are not accepted by the MCP endpoint.`;
  }
  return undefined;
}

const PORT = '(?::(\\d{1,5}))?';
const IPV6_HOST = new RegExp(`^\\[([0-9a-f:.]+)\\]${PORT}$`, 'i');
const IPV4_HOST = new RegExp(`^((?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3})${PORT}$`);
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const NAME_HOST = new RegExp(`^(${LABEL}(?:\\.${LABEL})*)\\.?${PORT}$`, 'i');

/** `name[:port]`, `a.b.c.d[:port]` or `[v6][:port]`; undefined for anything else (userinfo, paths, numbers that only look like addresses). */
export function parseHost(value: string): ParsedHost | undefined {
  const ipv6 = IPV6_HOST.exec(value);
  if (ipv6) return isIP(ipv6[1] as string) === 6 ? withPort({ kind: 'ipv6', hostname: (ipv6[1] as string).toLowerCase() }, ipv6[2]) : undefined;
  const ipv4 = IPV4_HOST.exec(value);
  if (ipv4) return withPort({ kind: 'ipv4', hostname: ipv4[1] as string }, ipv4[2]);
  const name = NAME_HOST.exec(value);
  if (!name || (name[1] as string).length > 253) return undefined;
  const hostname = (name[1] as string).toLowerCase();
  // A last label of digits only is no DNS name: it is an address in a form only some parsers read ("2130706433", "127.1").
  if (/^\d+$/.test(hostname.slice(hostname.lastIndexOf('.') + 1))) return undefined;
  return withPort({ kind: 'name', hostname }, name[2]);
}

/** An Origin header: `http(s)://host[:port]` exactly; "null" and anything else are not ours. */
function parseOrigin(origin: string): ParsedHost | undefined {
  const match = /^https?:\/\/(.+)$/i.exec(origin);
  return match ? parseHost(match[1] as string) : undefined;
}

function withPort(host: ParsedHost, port: string | undefined): ParsedHost | undefined {
  if (port === undefined) return host;
  const number = Number(port);
  return number >= 1 && number <= 65535 ? { ...host, port: number } : undefined;
}

function isOurs(policy: HostPolicy, host: ParsedHost | undefined, localAddress: string | undefined): boolean {
  if (host === undefined) return false;
  if (host.kind === 'name') return LOOPBACK_NAMES.has(host.hostname) || policy.configured.has(host.hostname);
  const address = canonicalAddress(host.hostname);
  if (LOOPBACK_ADDRESSES.has(address) || policy.configured.has(host.hostname) || policy.configured.has(`[${host.hostname}]`)) return true;
  return localAddress !== undefined && address === canonicalAddress(localAddress.replace(/^::ffff:(?=\d+\.)/i, ''));
}

/** One spelling per IP address ("0:0::1" and "::1" are the same), via the URL parser, safe on a literal already checked. */
function canonicalAddress(address: string): string {
  return isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
}
