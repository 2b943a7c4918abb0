// One health check: a GET of the service's health path at its address (its url: the front or
// process port that users reach), on keep-alive connections shared by every check of this node,
// so a check costs one request and no process. 2xx is healthy; anything else is a failed check
// with what was answered, in words a person can act on.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';

/** `tls`: the TLS handshake failed (a proxied name whose certificate the proxy does not hold yet), not the service. */
export type CheckResult = { ok: true } | { ok: false; answer: string; tls?: boolean };

/** Keep-alive connections for the checks, few per address: checks go out a bounded number at a time anyway. */
const checks = new Agent({ connections: 64, keepAliveTimeout: 60_000, pipelining: 1 });

/**
 * Names served by a server's proxy, to the address of that server: a check of such a name goes
 * there whatever the public DNS says (the service is checked, not the team's DNS), with the
 * name as TLS server name and Host, and without verifying the certificate (a pending one is not
 * an unhealthy service: certificates have their own states and events).
 */
const proxiedAt = new Map<string, string>();
const proxied = new Agent({
  connections: 64, keepAliveTimeout: 60_000, pipelining: 1,
  connect: {
    rejectUnauthorized: false,
    lookup: (hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
      const address = proxiedAt.get(hostname);
      if (address === undefined) return dnsLookup(hostname, options, callback as never);
      const family = isIP(address) || 4;
      if (options.all) return callback(null, [{ address, family }]);
      return callback(null, address, family);
    },
  },
});

/** `through`: the address of the server whose proxy serves the url's name (see proxiedAt). */
export async function checkHealth(url: string, healthPath: string, serviceId: string, timeoutMs: number, through?: string): Promise<CheckResult> {
  const target = new URL(healthPath, url);
  if (through !== undefined) proxiedAt.set(target.hostname, through);
  try {
    const response = await request(target, {
      dispatcher: through === undefined ? checks : proxied, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
      headers: { 'user-agent': 'teaminfra-health' },
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) return { ok: false, answer: `HTTP ${response.statusCode}` };
    // The bundled image says whose it is: an answer from another service on a leftover port is not this one's.
    const claimed = /"service_id"\s*:\s*"([^"]+)"/.exec(text.slice(0, 2000))?.[1];
    if (claimed !== undefined && claimed !== serviceId) return { ok: false, answer: 'answered for another service' };
    return { ok: true };
  } catch (error) {
    const code = String((error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code ?? '');
    return { ok: false, answer: failureOf(error, timeoutMs), ...(/^ERR_(SSL|TLS)_/.test(code) ? { tls: true } : {}) };
  }
}

function failureOf(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 100) / 10} s` : `${timeoutMs} ms`}`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection closed without an answer';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name not found';
  return code ? `request failed (${code})` : 'request failed';
}
