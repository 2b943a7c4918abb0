// The health watcher: every interval (TEAMINFRA_HEALTH_INTERVAL_S, 30 s by default), one node at a
// time (a maintenance lease, taken over by another node within three intervals when its holder
// stops) pings every Docker server's engine, then checks every running service with one HTTP
// request to its health path at its address (health-check.ts), reads each Docker service's
// restart count (crash-loops.ts), and sends the emails that are due (notification-sender.ts).
// Services are read a page at a time and checked a bounded number at a time, so a pass over
// 10,000 services neither holds the database nor the event loop for long (npm run bench, health).
// A pass that outlasts the interval delays the next one rather than overlap it. The clock is
// injected: tests move time.
import type { Db } from '../db/connect.js';
import { holdMaintenanceLease, releaseMaintenanceLease } from '../db/repositories/maintenance-leases.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countWatchedServices, listDockerServers, listRecentlyStarted, listWatchedServices, type PingedServer, type WatchedService,
} from '../db/repositories/service-health.js';
import { findApp } from '../engine/apps/app-registry.js';
import { runsRegisteredApp } from '../engine/docker/service-definition.js';
import { DockerError } from '../engine/docker/docker-api.js';
import type { EngineRegistry } from '../engine/docker/engine-registry.js';
import { parseEngineAddress, publishedHost } from '../engine/docker/engine-address.js';
import { DriverError, type ServiceDriver, type ServiceSpec } from '../engine/driver.js';
import { PeriodicPass } from '../engine/periodic-pass.js';
import { serviceUrl } from '../engine/service-url.js';
import { specOf } from '../engine/service-spec.js';
import { recordRestarts } from './crash-loops.js';
import { checkHealth } from './health-check.js';
import { checkTimeoutMs, WATCH_AFTER_OPERATION_MS } from './health-settings.js';
import { sendDueEmails } from './notification-sender.js';
import { recordPing, type PingResult } from './server-pings.js';
import { recordCheck } from './service-checks.js';

export const HEALTH_WATCH_LEASE = 'health-watch';

const PAGE = 100;
/** Checks (and engine reads) in flight at once. */
const CONCURRENCY = 64;
/** The local driver's ERP application answers here (src/engine/erp-app). */
const LOCAL_HEALTH_PATH = '/health';

export interface HealthWatcherOptions {
  /** This process's lease owner (the operations worker's). */
  owner: string;
  /** 0: never by itself (tests call tick()). */
  intervalMs: number;
  clock: () => number;
  /** The panel's address for the emails' links; null: the path only. */
  panelUrl(): string | null;
  onError(error: unknown, context: string): void;
}

export interface PassReport {
  /** False when another node holds the watch. */
  ran: boolean;
  startedAt: number;
  durationMs: number;
  checked: number;
  unhealthy: string[];
  recovered: string[];
  crashLoops: string[];
  unreachable: string[];
  emailsSent: number;
}

export class HealthWatcher {
  private readonly watching: PeriodicPass<PassReport>;
  /** Aborted by close(): a pass waiting between its pages ends there rather than hold the shutdown. */
  private closing = new AbortController();
  /** The passes this process ran, newest last (a few), for the benchmark and tests. */
  readonly passes: PassReport[] = [];

  constructor(
    private readonly db: Db, private readonly driver: ServiceDriver, private readonly engines: EngineRegistry,
    private readonly options: HealthWatcherOptions,
  ) {
    // The first pass one interval after start(), none at once.
    this.watching = new PeriodicPass(() => this.pass(), { ...options, atStart: false, what: 'watching health' });
  }

  start(): void {
    if (this.closing.signal.aborted) this.closing = new AbortController();
    this.watching.start();
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.watching.stop();
    await releaseMaintenanceLease(this.db.kysely, HEALTH_WATCH_LEASE, this.options.owner).catch(() => undefined);
  }

  /** One pass at the clock's now; one at a time per watcher. */
  tick(): Promise<PassReport> {
    return this.watching.tick();
  }

  private hold(now: number): Promise<boolean> {
    // Three intervals: a holder that stops is replaced within them; at least 10 s, for a pass of many services.
    const leaseMs = Math.max(10_000, 3 * this.options.intervalMs);
    return holdMaintenanceLease(this.db.kysely, HEALTH_WATCH_LEASE, this.options.owner, new Date(now).toISOString(), new Date(now + leaseMs).toISOString());
  }

  private async pass(): Promise<PassReport> {
    const now = this.options.clock();
    const report: PassReport = {
      ran: false, startedAt: now, durationMs: 0, checked: 0, unhealthy: [], recovered: [], crashLoops: [], unreachable: [], emailsSent: 0,
    };
    const started = performance.now();
    if (!(await this.hold(now))) return report;
    report.ran = true;
    const at = new Date(now).toISOString();
    const timeoutMs = checkTimeoutMs(this.options.intervalMs || 30_000);
    const servers = await listDockerServers(this.db.kysely);
    await inParallel(servers, CONCURRENCY, async (server) => {
      const outcome = await recordPing(this.db.kysely, server, await this.ping(server, timeoutMs), at);
      if (outcome === 'unreachable') report.unreachable.push(server.id);
      if (outcome === 'recovered') report.recovered.push(server.id);
    });
    const recent = new Map((await listRecentlyStarted(this.db.kysely, new Date(now - WATCH_AFTER_OPERATION_MS).toISOString()))
      .map((operation) => [operation.service_id as string, operation.id]));
    const healthPaths = new Map<string, Promise<string>>();
    // Pages spread over half the interval: 10,000 checks at once would hold the event loop (and
    // so every request this node serves) for their whole burst.
    const watched = await countWatchedServices(this.db.kysely);
    const spreadMs = this.options.intervalMs / 2;
    const pagesStarted = performance.now();
    for (let after = '', page = 0; ; page += 1) {
      const due = pagesStarted + (page * PAGE / Math.max(watched, 1)) * spreadMs;
      if (due > performance.now() && !(await sleep(due - performance.now(), true, { signal: this.closing.signal }).catch(() => false))) break;
      const services = await listWatchedServices(this.db.kysely, after, PAGE);
      await inParallel(services, CONCURRENCY, async (service) => {
        try {
          await this.watch(service, { at, timeoutMs, recentOperationId: recent.get(service.id) ?? null, healthPaths, report });
        } catch (error) {
          this.options.onError(error, `watching the health of service ${service.id}`);
        }
      });
      if (services.length < PAGE) break;
      after = services[services.length - 1]!.id;
      // A long pass keeps its lease; one that lost it (this node was taken for stopped) ends here.
      if (!(await this.hold(this.options.clock()))) break;
    }
    report.emailsSent = await sendDueEmails(this.db.kysely, {
      owner: this.options.owner, now: this.options.clock(), panelUrl: this.options.panelUrl(), timeoutMs: Math.max(timeoutMs, 5_000),
    }).catch((error: unknown) => {
      this.options.onError(error, 'sending the emails about incidents');
      return 0;
    });
    report.durationMs = performance.now() - started;
    this.passes.push(report);
    if (this.passes.length > 20) this.passes.shift();
    return report;
  }

  private async watch(
    service: WatchedService,
    pass: { at: string; timeoutMs: number; recentOperationId: string | null; healthPaths: Map<string, Promise<string>>; report: PassReport },
  ): Promise<void> {
    // Its engine does not answer: the server's incident says it all, and a check would fail for that alone.
    if (service.docker_host !== null && service.reachable === 0) return;
    const spec = specOf(service);
    if (spec.server.docker) {
      const restarts = await this.driver.restartCount?.(spec).catch(() => null);
      if (typeof restarts === 'number') {
        const outcome = await recordRestarts(this.db.kysely, service, restarts, pass.at, pass.recentOperationId);
        if (outcome === 'crash_loop') pass.report.crashLoops.push(service.id);
        if (outcome === 'recovered') pass.report.recovered.push(service.id);
      }
    }
    const url = serviceUrl(service);
    if (service.state !== 'running' || url === null) return;
    const healthPath = await this.healthPathOf(spec, pass.healthPaths).catch(() => null);
    if (healthPath === null) return;
    // Through its server's proxy: to that server's address, whatever the name's DNS says.
    const through = service.proxy_upstream !== null && service.docker_host !== null ? publishedHost(parseEngineAddress(service.docker_host)) : undefined;
    let result = await checkHealth(url, healthPath, service.id, pass.timeoutMs, through);
    // A name whose certificate is not issued yet (its DNS not pointed, the CA slow) is no
    // unhealthy service: then the driver asks the service itself, over the proxy's network.
    if (!result.ok && result.tls) {
      const status = await this.driver.status(spec).catch(() => null);
      result = status?.state === 'running' ? { ok: true } : { ok: false, answer: 'no answer through the proxy\'s network' };
    }
    pass.report.checked += 1;
    const outcome = await recordCheck(this.db.kysely, service, result, healthPath, pass.at);
    if (outcome === 'unhealthy') pass.report.unhealthy.push(service.id);
    if (outcome === 'recovered') pass.report.recovered.push(service.id);
  }

  /** The path its definition or image names (read once per pass per app or server), else the local application's. */
  private healthPathOf(spec: ServiceSpec, known: Map<string, Promise<string>>): Promise<string> {
    if (!spec.server.docker) return Promise.resolve(LOCAL_HEALTH_PATH);
    const app = runsRegisteredApp(spec) ? spec.app as string : null;
    const key = app ? `app:${app}` : `server:${spec.server.id}`;
    let path = known.get(key);
    if (!path) {
      path = app
        ? findApp(this.db.kysely, app).then((definition) => definition?.web.healthPath ?? LOCAL_HEALTH_PATH)
        : this.engines.contractOf(spec.server).then((contract) => contract.healthPath);
      known.set(key, path);
    }
    return path;
  }

  private async ping(server: PingedServer, timeoutMs: number): Promise<PingResult> {
    try {
      const spec = specOf({ ...server, server_id: server.id, name: '', revision: 0, port: null, pid: null, outgoing_smtp: null, parent_id: null });
      await this.engines.engineOf(spec.server).api.ping(timeoutMs);
      return { ok: true };
    } catch (error) {
      if (error instanceof DockerError || error instanceof DriverError) return { ok: false, error: error.reason };
      return { ok: false, error: 'The engine did not answer.' };
    }
  }
}

/** Runs `work` on every item, at most `limit` at once. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}
