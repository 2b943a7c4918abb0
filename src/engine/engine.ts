// The engine: a driver, the operations worker, and reconciliation, started and stopped as one.
// `close()` detaches by default: services keep running and the next start adopts them
// (src/engine/README.md says why). `close({ services: 'stop' })` stops them too (tests, benchmarks).
import type { Db } from '../db/connect.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { nowIso } from '../db/ids.js';
import { DEFAULT_RETENTION, pruneBackups, type RetentionPolicy } from './backup-retention.js';
import type { ServerSpec, ServiceDriver } from './driver.js';
import { LocalDriver } from './local/local-driver.js';
import { DockerDriver } from './docker/docker-driver.js';
import { ProxyKeeper, proxySyncIntervalFromEnv } from './docker/proxy/proxy-keeper.js';
import { EngineRegistry } from './docker/engine-registry.js';
import { DockerMoves } from './docker/service-move.js';
import { findRegistryCredentials } from './docker/registry-credentials.js';
import { engineCallTimeoutFromEnv } from './docker/docker-api.js';
import { reportDockerOrphans } from './docker/orphans.js';
import { backupCacheBytesFromEnv, openBackupCache } from './docker/backup-cache.js';
import { DriverRouter } from './driver-router.js';
import { defaultNodeName } from './node-name.js';
import { NodeHeartbeat } from './node-heartbeat.js';
import { performOperation } from './perform.js';
import { removeLeftMoveData } from './moves/left-data-sweep.js';
import { reconcileServices } from './reconcile.js';
import { serviceSpecQuery, specOf, takenPorts } from './service-spec.js';
import { changeServiceState } from './state-changes.js';
import { OperationWorker } from './worker.js';
import { BackupScheduler, DEFAULT_SCHEDULER_OPTIONS, type Clock } from './backup-schedule/scheduler.js';
import { pruneRows } from './row-retention/prune-rows.js';
import { ROW_RETENTION_NAMES, ROW_RETENTION_SETTINGS, type RowRetentionDays } from './row-retention/retention-settings.js';
import { EngineObserver } from './observe/engine-observer.js';
import type { ServiceObserver } from '../core/service-observer.js';
import { inWriteTransaction } from './write-transaction.js';
import { HealthWatcher } from '../health/health-watcher.js';
import { DEFAULT_HEALTH_INTERVAL_S } from '../health/health-settings.js';
import type { DockerEngine } from '../mail/container-mail-address.js';
import { relayPrivateAllowedFromEnv } from '../mail/outgoing-relay.js';
import type { RelayPolicy } from '../mail/relay-address.js';
import { DEFAULT_OFFSITE_OPTIONS, OffsiteUploader, type OffsiteUploaderOptions } from '../offsite/offsite-uploader.js';
import { DEFAULT_DRILL_RUNNER_OPTIONS, RestoreDrillRunner, type DrillRunnerOptions } from '../offsite/restore-drills/drill-runner.js';

export interface EngineConfig {
  /** This node: it runs only the operations and services of the servers it hosts (node-name.ts). */
  node: string;
  /** How long a worker's claim on an operation lasts without renewal. */
  leaseMs: number;
  /**
   * How long another node may go unseen before the operations queued for it are failed
   * (TEAMINFRA_NODE_GONE_MS; node-heartbeat.ts).
   */
  nodeGoneAfterMs: number;
  /** How often the worker looks for operations it was not woken for. */
  pollMs: number;
  /** Operations run at once by this process. */
  concurrency: number;
  /** Which backups are kept (TEAMINFRA_KEEP_SAFETY_BACKUPS, TEAMINFRA_KEEP_MANUAL_BACKUPS; backup-retention.ts). */
  backupRetention: RetentionPolicy;
  /** How often backups are pruned (also once at start); 0: never. */
  backupRetentionIntervalMs: number;
  /** Now, for backup schedules and retention: tests move it instead of waiting hours. */
  clock: Clock;
  /** How often the backup scheduler looks for due slots; 0: never by itself (tests call scheduler.tick()). */
  backupScheduleIntervalMs: number;
  /** How long after a scheduled backup failed it is tried again, and how many tries a slot gets in all. */
  backupRetryDelayMs: number;
  backupMaxAttempts: number;
  /** How long the control plane keeps its own rows (row-retention/retention-settings.ts; environment or default). */
  rowRetention: RowRetentionDays;
  /** How often rows are pruned (also once at start); 0: never. */
  rowRetentionIntervalMs: number;
  /** How often what moves left on the servers they left is removed once due (moves/left-data-sweep.ts; also once at start); 0: never. */
  moveSweepIntervalMs: number;
  /** How often running services are checked for a process that died; 0: never. */
  reconcileIntervalMs: number;
  /** How often the health watcher checks services and engines (TEAMINFRA_HEALTH_INTERVAL_S; src/health/); 0: never by itself (tests call health.tick()). */
  healthIntervalMs: number;
  /** How often each Docker server's proxy is brought in line with the database and its certificates looked at; 0: only at start. */
  proxySyncIntervalMs: number;
  /** The panel's address, for the links in the emails about incidents; null: the page's path only. */
  panelUrl: () => string | null;
  startTimeoutMs: number;
  stopGraceMs: number;
  /**
   * How long `close()` waits for the operations in progress (TEAMINFRA_SHUTDOWN_GRACE_MS); those
   * still running then are left to the next start, which resumes them, as after a crash.
   */
  shutdownGraceMs: number;
  /** The deadline of each Docker engine call (TEAMINFRA_ENGINE_CALL_TIMEOUT_MS): a short call's whole time, a stream's silence. */
  engineCallTimeoutMs: number;
  /**
   * "host:port" of the mail catcher while it runs, else null; asked at each start of a copy,
   * so the catcher may start before or after the engine. Copies send their mail only there.
   */
  copyMailRelay: () => string | null;
  /**
   * "host:port" of the mail catcher as the containers of a Docker engine reach it, asked at each
   * make and start of a copy there (src/mail/container-mail-address.ts); null while the catcher
   * is not listening. Rejects with a DriverError saying what to set when they cannot reach it.
   */
  containerMailRelay: (engine: DockerEngine) => Promise<string | null>;
  /** How a production service's relay is checked at each start and redeploy (src/mail/relay-address.ts). */
  outgoingRelay: RelayPolicy;
  /** `serve --docker-host`: servers created through the API become Docker servers on this engine; null: local. */
  newServersDockerHost: string | null;
  /** The most this node keeps of copies of backups kept on Docker engines (docker/backup-cache.ts); null: TEAMINFRA_BACKUP_CACHE_MB or its default. */
  backupCacheBytes: number | null;
  /** How backups are sent off-site (src/offsite/offsite-uploader.ts): how often, under what lease, retried how. */
  offsite: Partial<Omit<OffsiteUploaderOptions, 'onError'>>;
  /** How restore drills are run (src/offsite/restore-drills/drill-runner.ts): how often queued ones are looked for, under what lease. */
  drills: Partial<Omit<DrillRunnerOptions, 'onError' | 'node'>>;
}

/** How long a starting ERP service may take to answer its health check (TEAMINFRA_START_TIMEOUT_MS; slow hosts raise it). */
function startTimeoutFromEnv(): number {
  return positiveIntegerFromEnv('TEAMINFRA_START_TIMEOUT_MS', 10_000);
}

function positiveIntegerFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  node: defaultNodeName(), leaseMs: 30_000, nodeGoneAfterMs: 600_000, pollMs: 500,
  backupRetention: DEFAULT_RETENTION, backupRetentionIntervalMs: 600_000,
  clock: Date.now, backupScheduleIntervalMs: DEFAULT_SCHEDULER_OPTIONS.intervalMs,
  backupRetryDelayMs: DEFAULT_SCHEDULER_OPTIONS.retryDelayMs, backupMaxAttempts: DEFAULT_SCHEDULER_OPTIONS.maxAttempts,
  rowRetention: Object.fromEntries(ROW_RETENTION_NAMES.map((name) => [name, ROW_RETENTION_SETTINGS[name].defaultDays])) as RowRetentionDays,
  rowRetentionIntervalMs: 3_600_000, moveSweepIntervalMs: 600_000,
  concurrency: 8, reconcileIntervalMs: 15_000, healthIntervalMs: DEFAULT_HEALTH_INTERVAL_S * 1000, proxySyncIntervalMs: proxySyncIntervalFromEnv(),
  panelUrl: () => process.env.TEAMINFRA_PUBLIC_URL?.trim().replace(/\/+$/, '') || null, startTimeoutMs: startTimeoutFromEnv(), stopGraceMs: 5_000,
  shutdownGraceMs: positiveIntegerFromEnv('TEAMINFRA_SHUTDOWN_GRACE_MS', 10_000),
  engineCallTimeoutMs: engineCallTimeoutFromEnv(),
  copyMailRelay: () => null,
  containerMailRelay: async () => null,
  outgoingRelay: { allowPrivate: relayPrivateAllowedFromEnv() },
  newServersDockerHost: null,
  backupCacheBytes: null,
  offsite: {},
  drills: {},
};

export interface Engine {
  readonly driver: ServiceDriver;
  /** Reads services' logs and metrics (whether or not the engine was started). */
  readonly observer: ServiceObserver;
  readonly started: boolean;
  /** Takes due backup slots (by itself every backupScheduleIntervalMs; tests call tick()). */
  readonly scheduler: BackupScheduler;
  /** Watches health between operations (by itself every healthIntervalMs; tests call tick()). */
  readonly health: HealthWatcher;
  /** Sends completed backups off-site (by itself every offsite.intervalMs; tests may call tick()). */
  readonly offsite: OffsiteUploader;
  /** Keeps Docker servers' proxies in line with the database (by itself every proxySyncIntervalMs; tests may call tick()). */
  readonly proxies: ProxyKeeper;
  /** Runs the restore drills the scheduler queued (by itself every drills.intervalMs; tests and the operator's command call it). */
  readonly drills: RestoreDrillRunner;
  /** Removes what moves left on the servers they left once due (by itself every moveSweepIntervalMs); the moves done. */
  sweepMoves(): Promise<string[]>;
  /** Reconciles services with what really runs, then starts taking operations. */
  start(): Promise<void>;
  close(options?: { services?: 'detach' | 'stop' }): Promise<void>;
}

export function createEngine(db: Db, secrets: SecretBox, overrides: Partial<EngineConfig> = {}, onError = logEngineError): Engine {
  const config = { ...DEFAULT_ENGINE_CONFIG, ...overrides };
  const local = new LocalDriver({
    dataDir: db.dataDir, secrets, startTimeoutMs: config.startTimeoutMs, stopGraceMs: config.stopGraceMs,
    takenPorts: () => takenPorts(db.kysely), copyMailRelay: config.copyMailRelay, outgoingRelay: config.outgoingRelay,
  });
  const backupCache = openBackupCache(db.dataDir, config.backupCacheBytes ?? backupCacheBytesFromEnv());
  const engines = new EngineRegistry(config.engineCallTimeoutMs, (serverId, registry) => findRegistryCredentials(db.kysely, secrets, serverId, registry));
  const dockerOptions = {
    db: db.kysely, secrets, engines, dataDir: db.dataDir, startTimeoutMs: config.startTimeoutMs, stopGraceMs: config.stopGraceMs,
    takenPorts: () => takenPorts(db.kysely), outgoingRelay: config.outgoingRelay,
    containerMailRelay: (server: ServerSpec) => config.containerMailRelay(engines.engineOf(server)),
  };
  const docker = new DockerDriver(dockerOptions);
  const driver = new DriverRouter(local, docker, new DockerMoves(dockerOptions));
  const reconcileDeps = { db: db.kysely, driver, node: config.node, onError };
  const worker = new OperationWorker(db, (operation, owner, attempt, abandoned) =>
    performOperation({ db, driver, onError, newServersDockerHost: config.newServersDockerHost, secrets }, operation, owner, attempt, abandoned), {
    node: config.node, leaseMs: config.leaseMs, pollMs: config.pollMs, concurrency: config.concurrency, onError,
  });
  const proxies = new ProxyKeeper(dockerOptions, { intervalMs: config.proxySyncIntervalMs, owner: worker.owner, onError });
  const heartbeat = new NodeHeartbeat(db, {
    node: config.node, goneAfterMs: config.nodeGoneAfterMs, onError,
    intervalMs: Math.max(100, Math.floor(Math.min(config.leaseMs, config.nodeGoneAfterMs) / 3)),
  });
  let state: 'new' | 'started' | 'closed' = 'new';
  let reconcileTimer: NodeJS.Timeout | undefined;
  let reconciling: Promise<void> | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let pruning: Promise<unknown> | undefined;
  const scheduler = new BackupScheduler(db, {
    clock: config.clock, intervalMs: config.backupScheduleIntervalMs, retryDelayMs: config.backupRetryDelayMs,
    maxAttempts: config.backupMaxAttempts, onError,
  });
  const health = new HealthWatcher(db, driver, engines, {
    owner: worker.owner, intervalMs: config.healthIntervalMs, clock: config.clock, panelUrl: config.panelUrl, onError,
  });
  // Reads a backup's bytes where the driver keeps them (the node's copy of an engine's backup, fetched and checked when missing).
  const offsite = new OffsiteUploader(db, secrets, {
    hold: async (backup) => (await import('./docker/backup-store.js')).localBackupFile(db.kysely, db.dataDir, backup),
  }, { ...DEFAULT_OFFSITE_OPTIONS, ...config.offsite, onError });
  const drills = new RestoreDrillRunner(db, { driver, secrets, dataDir: db.dataDir }, {
    ...DEFAULT_DRILL_RUNNER_OPTIONS, ...config.drills, node: config.node, onError,
  });
  let movesTimer: NodeJS.Timeout | undefined;
  let sweepingMoves: Promise<string[]> | undefined;
  const sweepMoves = () => {
    sweepingMoves ??= removeLeftMoveData(db.kysely, driver, new Date(config.clock()).toISOString(), onError)
      .catch((error: unknown) => {
        onError(error, 'removing what moves left');
        return [];
      })
      .finally(() => {
        sweepingMoves = undefined;
      });
    return sweepingMoves;
  };
  let rowsTimer: NodeJS.Timeout | undefined;
  let pruningRows: Promise<unknown> | undefined;
  const pruneOldRows = () => {
    pruningRows ??= pruneRows(db, { owner: worker.owner, now: config.clock(), fallback: config.rowRetention })
      .catch((error: unknown) => onError(error, 'pruning rows'))
      .finally(() => {
        pruningRows = undefined;
      });
  };
  const prune = () => {
    pruning ??= pruneBackups(db, { node: config.node, defaults: config.backupRetention, now: config.clock() })
      .catch((error: unknown) => onError(error, 'pruning backups'))
      .finally(() => {
        pruning = undefined;
      });
  };

  return {
    driver,
    scheduler,
    health,
    offsite,
    proxies,
    drills,
    observer: new EngineObserver(db.kysely, engines, db.dataDir),
    sweepMoves,
    get started() {
      return state === 'started';
    },
    async start() {
      if (state !== 'new') return;
      state = 'started';
      // What a killed process was writing or fetching: no operation of this node runs yet.
      backupCache.clearSpool();
      await heartbeat.start();
      await reconcileServices(reconcileDeps, 'startup');
      await reportDockerOrphans(db.kysely, engines, onError);
      worker.start();
      if (config.backupRetentionIntervalMs > 0) {
        prune();
        retentionTimer = setInterval(prune, config.backupRetentionIntervalMs);
        retentionTimer.unref();
      }
      scheduler.start();
      health.start();
      proxies.start();
      offsite.start();
      drills.start();
      if (config.moveSweepIntervalMs > 0) {
        void sweepMoves();
        movesTimer = setInterval(() => void sweepMoves(), config.moveSweepIntervalMs);
        movesTimer.unref();
      }
      if (config.rowRetentionIntervalMs > 0) {
        pruneOldRows();
        rowsTimer = setInterval(pruneOldRows, config.rowRetentionIntervalMs);
        rowsTimer.unref();
      }
      if (config.reconcileIntervalMs > 0) {
        reconcileTimer = setInterval(() => {
          reconciling ??= reconcileServices(reconcileDeps, 'periodic').finally(() => {
            reconciling = undefined;
          });
        }, config.reconcileIntervalMs);
        reconcileTimer.unref();
      }
    },
    async close(options = {}) {
      if (state === 'closed') return;
      state = 'closed';
      if (reconcileTimer) clearInterval(reconcileTimer);
      if (retentionTimer) clearInterval(retentionTimer);
      if (rowsTimer) clearInterval(rowsTimer);
      if (movesTimer) clearInterval(movesTimer);
      await scheduler.close();
      await health.close();
      await proxies.close();
      await offsite.close();
      await drills.close(config.shutdownGraceMs);
      await reconciling;
      await pruning;
      await pruningRows;
      await sweepingMoves;
      const abandoned = await worker.close(config.shutdownGraceMs);
      await heartbeat.close();
      if (abandoned > 0) {
        // Their engine calls end now instead of holding the process (they resume at the next start).
        onError(new Error(`${abandoned} operation(s) still running after ${config.shutdownGraceMs} ms were left to the next start`), 'stopping the engine');
        await engines.destroy();
        return;
      }
      if (options.services === 'stop') await stopEveryService(db, driver, onError);
      await engines.close();
    },
  };
}

/** Stops every service's process and records it stopped; for tests and benchmarks. */
async function stopEveryService(db: Db, driver: ServiceDriver, onError: (error: unknown, context: string) => void): Promise<void> {
  const rows = await serviceSpecQuery(db.kysely).select(['s.state'])
    .where('s.deleted_at', 'is', null).execute();
  await Promise.all(rows.map(async (row) => {
    try {
      await driver.stop(specOf(row));
      if (row.state === 'stopped' && row.pid === null) return;
      await inWriteTransaction(db.kysely, (trx) =>
        changeServiceState(trx, row.id, { state: 'stopped', pid: null }, { kind: 'stop', operationId: null }, nowIso()));
    } catch (error) {
      onError(error, `stopping service ${row.id}`);
    }
  }));
}

function logEngineError(error: unknown, context: string): void {
  console.error(JSON.stringify({ level: 'error', msg: 'engine error', context, reason: String((error as Error)?.stack ?? error) }));
}
