// The whole configuration of a server's proxy (Caddy), as one JSON document built from what the
// database says: the routes (a service's names to the container that serves it), the ACME
// settings, and the operator's own certificates. A pure function: the same routes give the same
// document, so a push of an unchanged configuration is a no-op for Caddy, and the proxy never
// holds anything we cannot make again from the database.
//
// Two servers: :443 serves the routes over TLS (HSTS on every answer, 421 for a Host that is
// not one of the server's names or does not match the TLS name asked for); :80 answers Caddy's
// HTTP-01 challenges (Caddy does that before any route), sends the server's names to HTTPS, and
// answers 404 to any other Host. The ports inside the container are fixed; the engine publishes
// them on the ports the operator chose, which only the redirect needs to know.
import { PROXY_ADMIN_SOCKET, PROXY_STATE_DIR } from '../../apps/images/image-recipes.js';
import { isHeldUpstream } from './held-upstream.js';

export interface ProxyRoute {
  /** ASCII names (IDNA-converted), the platform name first. */
  hostnames: string[];
  /** `host:port` on the proxy's network: the service's current web container. */
  upstream: string;
  /** Answers 2xx once the service serves requests. */
  healthPath: string;
}

export interface AcmeSettings {
  /** The ACME directory URL (Let's Encrypt's by default). */
  directoryUrl: string;
  /** The contact the CA writes to about expiring certificates; null: none. */
  email: string | null;
  /** A PEM file, inside the proxy container, that the proxy trusts for the directory (a test CA's); null: the system's roots. */
  caRootFile: string | null;
  /** The registered account's key (acme-account.ts); null: Caddy registers one itself. */
  accountKeyPem: string | null;
  /** How often Caddy looks for certificates due for renewal; null: Caddy's default (10 minutes). */
  renewIntervalSeconds: number | null;
  /** The share of a certificate's lifetime left when it is renewed; null: Caddy's default (1/3). */
  renewalWindowRatio: number | null;
}

export interface OperatorCertificate {
  certificatePem: string;
  keyPem: string;
  /** The names it covers (its SANs, `*.` for a wildcard): ACME is not asked for them. */
  hostnames: string[];
}

export interface ProxyConfigInput {
  routes: ProxyRoute[];
  acme: AcmeSettings;
  /** The port the server's HTTPS is published on: redirects name it unless it is 443. */
  publicHttpsPort: number;
  operatorCertificates: OperatorCertificate[];
}

/** Inside the container; the engine maps the operator's ports to these. */
export const CONTAINER_HTTP_PORT = 80;
export const CONTAINER_HTTPS_PORT = 443;
export const CERTIFICATE_STORAGE = `${PROXY_STATE_DIR}/data/caddy`;
export const HSTS = 'max-age=31536000';
/** How long a request may wait for its service's upstream to accept a connection (a redeploy's instant), and how often it tries. */
const UPSTREAM_WAIT = { try_duration: '10s', try_interval: '100ms' };
/** The same while a restore holds the service's requests (held-upstream.ts): its swap takes a safety backup and a start. */
const HELD_UPSTREAM_WAIT = { try_duration: '60s', try_interval: '250ms' };

export function buildCaddyConfig(input: ProxyConfigInput): Record<string, unknown> {
  const routes = [...input.routes].sort((a, b) => (a.hostnames[0] ?? '').localeCompare(b.hostnames[0] ?? ''));
  const names = routes.flatMap((route) => route.hostnames);
  const covered = input.operatorCertificates.flatMap((certificate) => certificate.hostnames);
  const acmeNames = names.filter((name) => !covered.some((pattern) => coversName(pattern, name)));
  const redirectTarget = input.publicHttpsPort === 443 ? 'https://{http.request.host}{http.request.uri}'
    : `https://{http.request.host}:${input.publicHttpsPort}{http.request.uri}`;
  return {
    admin: { listen: `unix/${PROXY_ADMIN_SOCKET}` },
    logging: { logs: { default: { level: 'INFO', encoder: { format: 'json' } } } },
    storage: { module: 'file_system', root: CERTIFICATE_STORAGE },
    apps: {
      http: {
        http_port: CONTAINER_HTTP_PORT,
        https_port: CONTAINER_HTTPS_PORT,
        servers: {
          https: {
            listen: [`:${CONTAINER_HTTPS_PORT}`],
            // A TLS name and a Host that differ never reach a service: 421.
            strict_sni_host: true,
            // HTTP/3 is UDP, which the engine does not publish: never advertised.
            protocols: ['h1', 'h2'],
            automatic_https: { disable_redirects: true },
            routes: [
              ...routes.map((route) => ({
                match: [{ host: route.hostnames }],
                handle: [
                  { handler: 'headers', response: { set: { 'Strict-Transport-Security': [HSTS] } } },
                  reverseProxy(route),
                ],
                terminal: true,
              })),
              { handle: [{ handler: 'static_response', status_code: 421, body: 'This server has no service under that name.\n' }] },
            ],
          },
          http: {
            listen: [`:${CONTAINER_HTTP_PORT}`],
            routes: [
              ...(names.length > 0 ? [{
                match: [{ host: names }],
                handle: [{ handler: 'static_response', status_code: 308, headers: { Location: [redirectTarget] } }],
                terminal: true,
              }] : []),
              { handle: [{ handler: 'static_response', status_code: 404, body: 'This server has no service under that name.\n' }] },
            ],
          },
        },
      },
      tls: {
        ...(input.operatorCertificates.length > 0
          ? { certificates: { load_pem: input.operatorCertificates.map((certificate) => ({ certificate: certificate.certificatePem, key: certificate.keyPem })) } }
          : {}),
        automation: {
          policies: [{
            ...(acmeNames.length > 0 ? { subjects: acmeNames } : {}),
            issuers: [acmeIssuer(input.acme)],
            ...(input.acme.renewalWindowRatio === null ? {} : { renewal_window_ratio: input.acme.renewalWindowRatio }),
          }],
          ...(input.acme.renewIntervalSeconds === null ? {} : { renew_interval: `${input.acme.renewIntervalSeconds}s` }),
        },
      },
    },
  };
}

/** `*.apps.example.com` covers `shop.apps.example.com` (one label), not `apps.example.com` nor `a.b.apps.example.com`. */
export function coversName(pattern: string, name: string): boolean {
  if (!pattern.startsWith('*.')) return pattern === name;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot + 1) === pattern.slice(2);
}

function reverseProxy(route: ProxyRoute): Record<string, unknown> {
  return {
    handler: 'reverse_proxy',
    upstreams: [{ dial: route.upstream }],
    // A request that cannot reach its upstream (the instant of a switch, a restore's swap) waits
    // and tries again rather than failing; nothing is retried once it reached the service.
    // No active health checks: with one upstream a route has no other to send to, so a check
    // could only fail held requests sooner (an upstream marked down during a restore's swap
    // stays down until the next check). The driver sends traffic to a revision only once it
    // answered its health check, and the health watcher checks every service through here.
    load_balancing: isHeldUpstream(route.upstream) ? HELD_UPSTREAM_WAIT : UPSTREAM_WAIT,
  };
}

function acmeIssuer(acme: AcmeSettings): Record<string, unknown> {
  return {
    module: 'acme',
    ca: acme.directoryUrl,
    ...(acme.email ? { email: acme.email } : {}),
    ...(acme.caRootFile ? { trusted_roots_pem_files: [acme.caRootFile] } : {}),
    ...(acme.accountKeyPem ? { account_key: acme.accountKeyPem } : {}),
    challenges: { http: { disabled: false }, 'tls-alpn': { disabled: false } },
  };
}
