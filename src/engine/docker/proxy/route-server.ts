// Which services a server's proxy serves, from the database, and the one call that brings the
// proxy in line with it. A service is served by its server's proxy once it has a name: the
// server has a base domain (admin set-server-domain), or the team gave it a domain of its own;
// until then it has its own front (service-front.ts), as before proxies existed.
//
// The routes are the services whose row says the proxy serves them (proxy_upstream, written when
// a start, redeploy or restore ends) and that should be serving, plus the change the caller is
// making now (a new revision's container, or a service that stops): so a crash between the push
// and the row's update is mended by the next push, and a restart of serve pushes the same routes.
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/tables.js';
import { DriverError, type ProxyTarget, type ServerSpec } from '../../driver.js';
import type { DockerDriverOptions } from '../docker-driver-options.js';
import { configureServerProxy } from './configure-proxy.js';

/** How long a container the proxy no longer sends requests to keeps running, for those it had sent before. */
export const PROXY_DRAIN_MS = 2_000;

/** Rows in these states are not served: their containers are stopped or going. */
const NOT_SERVING = ['stopped', 'failed', 'deleting', 'provisioning'] as const;

/** Whether the service is served by its server's proxy: the server has a base domain, or the team gave the service a domain of its own. */
export async function servedByProxy(db: Kysely<Database>, serviceId: string, serverId: string): Promise<boolean> {
  const server = await db.selectFrom('docker_servers').select('base_domain').where('server_id', '=', serverId).executeTakeFirst();
  if (!server) return false;
  if (server.base_domain) return true;
  const named = await db.selectFrom('service_domains').select('domain').where('service_id', '=', serviceId).where('kind', '=', 'custom').limit(1).executeTakeFirst();
  return named !== undefined;
}

/**
 * Pushes the server's routes to its proxy (made and started when missing): every service the
 * database says it serves, with `change` applied (a service and the container it now answers
 * from, or null: no longer served). Unchanged routes are a no-op for the proxy.
 */
export async function routeServer(
  options: DockerDriverOptions, server: ServerSpec, change?: { serviceId: string; target: ProxyTarget | null },
): Promise<void> {
  const serving = new Map<string, ProxyTarget>();
  const rows = await options.db.selectFrom('erp_services').select(['id', 'proxy_upstream', 'proxy_health_path'])
    .where('server_id', '=', server.id).where('deleted_at', 'is', null).where('proxy_upstream', 'is not', null)
    .where('state', 'not in', [...NOT_SERVING]).execute();
  for (const row of rows) serving.set(row.id, { upstream: row.proxy_upstream!, healthPath: row.proxy_health_path ?? '/' });
  if (change) {
    if (change.target) serving.set(change.serviceId, change.target);
    else serving.delete(change.serviceId);
  }
  const { api } = options.engines.engineOf(server);
  try {
    await configureServerProxy(options.db, options.secrets, api, server.id, serving, { bindAddress: proxyBindAddress() });
  } catch (error) {
    if (error instanceof DriverError) throw error;
    throw new DriverError(`The server's proxy could not be configured: ${(error as Error).message}`, false, { cause: error });
  }
}

/** The service's https address: its first name (the platform name first) and the proxy's HTTPS port. */
export async function httpsAddressOf(db: Kysely<Database>, serviceId: string, serverId: string): Promise<{ name: string; port: number }> {
  const name = await db.selectFrom('service_domains').select('domain').where('service_id', '=', serviceId)
    .orderBy('kind', 'desc').orderBy('domain').executeTakeFirst();
  const server = await db.selectFrom('docker_servers').select('proxy_https_port').where('server_id', '=', serverId).executeTakeFirst();
  if (!name) throw new DriverError('The service has no name on its server yet: the operator gives the server a base domain (admin set-server-domain), or the team adds a domain.');
  return { name: name.domain, port: server?.proxy_https_port ?? 443 };
}

/**
 * Where the proxies' ports are published: every address of the engine's host (a real server),
 * unless TEAMINFRA_PROXY_BIND_ADDRESS names one (127.0.0.1 keeps a test's or a laptop's proxy on loopback).
 */
export function proxyBindAddress(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEAMINFRA_PROXY_BIND_ADDRESS?.trim() ?? '';
}
