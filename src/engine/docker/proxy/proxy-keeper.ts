// Keeps each Docker server's proxy in line with the database, on an interval and once at
// serve's start: the routes pushed again (a no-op when unchanged; after a restart of serve or of
// the proxy container, or a domain a team added or removed, every name answers again from the
// database), then one look at its names' certificates (watch-certificates.ts: their states and
// the certificate.* events). A server whose engine does not answer is tried again next time; the
// health watcher tells the team about it. One node at a time (a maintenance lease, like the
// health watcher's): several would push the same routes, and could report a certificate twice.
import type { Resolver } from 'node:dns/promises';
import { holdMaintenanceLease, releaseMaintenanceLease } from '../../../db/repositories/maintenance-leases.js';
import { resolverFromEnv } from '../../domains/name-lookup.js';
import { PeriodicPass } from '../../periodic-pass.js';
import { loadServerSpec } from '../../service-spec.js';
import type { DockerDriverOptions } from '../docker-driver-options.js';
import { proxyContainerName } from './proxy-container.js';
import { routeServer } from './route-server.js';
import { watchCertificates } from './watch-certificates.js';

export const PROXY_KEEPER_LEASE = 'proxy-keeper';

export interface ProxyKeeperOptions {
  /** TEAMINFRA_PROXY_SYNC_INTERVAL_S (10 s by default); 0: only when asked (tests). */
  intervalMs: number;
  /** This process's lease owner (the operations worker's). */
  owner: string;
  onError(error: unknown, context: string): void;
}

export class ProxyKeeper {
  private readonly passes: PeriodicPass<void>;
  /** Per server: where the next look at the proxy's log starts. */
  private readonly since = new Map<string, number>();
  private readonly resolver: Resolver = resolverFromEnv();

  constructor(private readonly driverOptions: DockerDriverOptions, private readonly options: ProxyKeeperOptions) {
    this.passes = new PeriodicPass(() => this.pass(), { ...options, atStart: true, what: 'keeping the proxies' });
  }

  start(): void {
    this.passes.start();
    // Once at serve's start even when not periodic: after a restart, every name answers again from the database.
    if (this.options.intervalMs <= 0) this.tick().catch((error: unknown) => this.options.onError(error, 'keeping the proxies'));
  }

  async close(): Promise<void> {
    await this.passes.stop();
    await releaseMaintenanceLease(this.driverOptions.db, PROXY_KEEPER_LEASE, this.options.owner).catch(() => undefined);
  }

  /** One pass over the servers with names; one at a time. */
  tick(): Promise<void> {
    return this.passes.tick();
  }

  private async pass(): Promise<void> {
    const { db } = this.driverOptions;
    const now = Date.now();
    // Three intervals: a holder that stops is replaced within them; at least 30 s, for a pass over many servers.
    const leaseMs = Math.max(30_000, 3 * this.options.intervalMs);
    if (!(await holdMaintenanceLease(db, PROXY_KEEPER_LEASE, this.options.owner, new Date(now).toISOString(), new Date(now + leaseMs).toISOString()))) return;
    // Servers with a base domain, or a service with a name of its own.
    const servers = await db.selectFrom('docker_servers as d').innerJoin('servers as v', 'v.id', 'd.server_id')
      .select('d.server_id').where('v.deleted_at', 'is', null).where('v.state', '!=', 'lost')
      // An engine the health watcher found unreachable is left alone until it answers again.
      .where('v.reachable', '=', 1)
      .where((eb) => eb.or([
        eb('d.base_domain', 'is not', null),
        eb.exists(eb.selectFrom('service_domains as n').innerJoin('erp_services as s', 's.id', 'n.service_id')
          .select('n.domain').whereRef('s.server_id', '=', 'd.server_id').where('s.deleted_at', 'is', null)),
      ])).execute();
    for (const { server_id: serverId } of servers) {
      try {
        const server = await loadServerSpec(db, serverId);
        await routeServer(this.driverOptions, server);
        const { api } = this.driverOptions.engines.engineOf(server);
        const { nextSinceMs } = await watchCertificates(db, api, proxyContainerName(serverId), serverId, {
          sinceMs: this.since.get(serverId) ?? 0, resolver: this.resolver,
        });
        this.since.set(serverId, nextSinceMs);
      } catch (error) {
        this.options.onError(error, `keeping the proxy of server ${serverId}`);
      }
    }
  }
}

/** TEAMINFRA_PROXY_SYNC_INTERVAL_S in ms: 10 s unless set. */
export function proxySyncIntervalFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.TEAMINFRA_PROXY_SYNC_INTERVAL_S ?? 10);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 10_000;
}
