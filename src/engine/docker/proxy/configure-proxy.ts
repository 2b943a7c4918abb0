// The one call the Docker driver makes to bring a server's proxy in line with the database: the
// proxy container running on the server's ports (ensureProxy), the server's ACME account
// registered (once per process, key and directory), and the whole configuration rebuilt from the
// database and pushed (POST /load: no restart; unchanged, a no-op). The driver gives what only it
// knows: for each service that serves now, the container (on the proxy's network) and port that
// answer, and its health path. A service not given is not routed: its names answer 421.
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/tables.js';
import type { SecretBox } from '../../../secrets/secret-box.js';
import { ensurePlatformDomain } from '../../domains/platform-name.js';
import { acmeAccountKey, serverCertificate } from '../../domains/proxy-secrets.js';
import type { DockerApi } from '../docker-api.js';
import { registerAcmeAccount } from './acme-account.js';
import { acmeSettingsFromEnv } from './acme-settings.js';
import type { CaddyAdmin } from './caddy-admin.js';
import { buildCaddyConfig, type ProxyRoute } from './caddy-config.js';
import { CONTAINER_ACME_CA_ROOT, ensureProxy } from './proxy-container.js';

export interface ServingUpstream {
  /** `container-name:port` on the proxy's network (joinProxyNetwork). */
  upstream: string;
  healthPath: string;
}

export interface ConfigureOptions {
  /** '' (every interface) for a real server; 127.0.0.1 for a test's. */
  bindAddress: string;
  env?: NodeJS.ProcessEnv;
  /** Told when the ACME account could not be registered (the directory unreachable): serving goes on. */
  onAcmeError?: (error: unknown) => void;
  /** Caddy's renewal timing, for tests that make a certificate due at once. */
  renewal?: { intervalSeconds: number; windowRatio: number };
}

const registered = new Set<string>();

export async function configureServerProxy(
  db: Kysely<Database>, secrets: SecretBox, api: DockerApi, serverId: string, serving: ReadonlyMap<string, ServingUpstream>, options: ConfigureOptions,
): Promise<CaddyAdmin> {
  const acme = acmeSettingsFromEnv(options.env);
  const server = await db.selectFrom('docker_servers').select(['proxy_http_port', 'proxy_https_port']).where('server_id', '=', serverId).executeTakeFirstOrThrow();
  const httpsPort = server.proxy_https_port ?? 443;
  const admin = await ensureProxy(api, { serverId, httpPort: server.proxy_http_port ?? 80, httpsPort, bindAddress: options.bindAddress, acmeCaRootPem: acme.caRootPem });
  const accountKeyPem = await acmeAccountKey(db, secrets, serverId);
  const registration = `${acme.directoryUrl}\n${accountKeyPem}`;
  // Serving never waits on the CA: a directory that cannot be reached now leaves the account to
  // be registered at the next push (and Caddy, which has the key, registers it when it orders);
  // the names' certificates fail meanwhile, with their events.
  if (!registered.has(registration)) {
    const ok = await registerAcmeAccount(acme, accountKeyPem).then(() => true, (error: unknown) => {
      options.onAcmeError?.(error);
      return false;
    });
    if (ok) registered.add(registration);
  }
  const certificate = await serverCertificate(db, secrets, serverId);
  const routes = await serverRoutes(db, serverId, serving);
  await admin.load(buildCaddyConfig({
    routes, publicHttpsPort: httpsPort, operatorCertificates: certificate ? [certificate] : [],
    acme: {
      directoryUrl: acme.directoryUrl, email: acme.email, caRootFile: acme.caRootPem ? CONTAINER_ACME_CA_ROOT : null, accountKeyPem,
      renewIntervalSeconds: options.renewal?.intervalSeconds ?? null, renewalWindowRatio: options.renewal?.windowRatio ?? null,
    },
  }));
  return admin;
}

/** Each serving service's names (its platform name first, assigned now if the server has a base domain) to its upstream. */
export async function serverRoutes(db: Kysely<Database>, serverId: string, serving: ReadonlyMap<string, ServingUpstream>): Promise<ProxyRoute[]> {
  if (serving.size === 0) return [];
  // By id: a service moving here is routed by its new server's proxy before its row says so.
  const services = await db.selectFrom('erp_services').select(['id', 'name'])
    .where('deleted_at', 'is', null).where('id', 'in', [...serving.keys()]).execute();
  const routes: ProxyRoute[] = [];
  for (const service of services) {
    await ensurePlatformDomain(db, { ...service, server_id: serverId });
    const names = await db.selectFrom('service_domains').select('domain').where('service_id', '=', service.id).orderBy('kind', 'desc').orderBy('domain').execute();
    const target = serving.get(service.id)!;
    if (names.length > 0) routes.push({ hostnames: names.map((row) => row.domain), upstream: target.upstream, healthPath: target.healthPath });
  }
  return routes;
}
