// The seam between operations and whatever really runs ERP services. Operations (src/engine/
// actions) only speak this interface, so a container or remote-host driver can be added later
// without touching a capability.

/** Where a server keeps its services. `rootDir` null: the driver chooses (and reports it). */
/** A server's own limits for each ERP container; null: the default. */
export interface ContainerLimitsSetting { memoryMb: number | null; cpuMillicores: number | null }

export interface ServerSpec {
  id: string;
  rootDir: string | null;
  /** A Docker engine (src/engine/docker) and the image its services run (null: the bundled one); null: local processes. */
  docker: { host: string; image: string | null; limits?: ContainerLimitsSetting } | null;
}

/** What a driver needs to know about one ERP service. */
export interface ServiceSpec {
  id: string;
  name: string;
  /** The revision to run. */
  revision: number;
  /** The port it had last time, kept so that its address stays stable; null: choose one. */
  port: number | null;
  /** The process id recorded last time, a hint for finding a process that outlived us. */
  pid: number | null;
  /** "host:port" of the SMTP server its outgoing mail goes to; null: it sends no email. Ignored for a copy. */
  outgoingSmtp: string | null;
  /** The operator allowed that relay to be a private address; else it is checked again at each start (outgoing-relay-target.ts). */
  outgoingSmtpAllowPrivate?: boolean;
  /** For a copy, the ERP service it copies. A copy's mail only ever goes to the mail catcher. */
  parentId: string | null;
  /** The app definition it runs (src/engine/apps); null, absent or `demo`: the server's image, as a one-service definition (docker/contract-definition.ts). */
  app?: string | null;
  server: ServerSpec;
}

/** What creating a service gives back once: an app's admin login, its password sealed for the creating token (apps/initial-credentials.ts). */
export interface ProvisionResult {
  initialCredentials?: { login: string; password_sealed: string; fields_sealed?: string };
}

export interface RunningService {
  pid: number;
  port: number;
  revision: number;
  /** The host its port is published on, when not this machine (a Docker engine elsewhere); its first name when its server's proxy serves it. */
  publishedHost?: string;
  /** Served by its server's proxy over HTTPS (port is then the proxy's HTTPS port): where the proxy sends its requests. */
  proxy?: ProxyTarget;
}

/** Where a server's proxy sends a service's requests: its web container on the proxy's network. */
export interface ProxyTarget {
  /** `container-name:port` on the proxy's network. */
  upstream: string;
  /** Answers 2xx once the service serves requests (the proxy's health check). */
  healthPath: string;
}

/** What is really running, whatever the database says. */
export type ServiceStatus =
  | ({ state: 'running' } & RunningService)
  /** A process of this service is alive but does not answer yet (booting, or hung). */
  | { state: 'starting'; pid: number }
  | { state: 'stopped' };

/** Called while starting, so that a crash between two steps leaves a trace to recover from. */
export interface StartHooks {
  /** The port is about to be used; persist it before the process exists. */
  portAssigned(port: number): Promise<void>;
  /** The process exists; persist its id before waiting for it. */
  spawned(pid: number): Promise<void>;
  /**
   * Runs one part of the start that takes time of its own (an app's database health wait, its
   * migration, its web container's health wait) as an operation step of its own, named `step`,
   * with `detail` when it went well (operation-steps.ts gives it). Absent: the work just runs.
   */
  timed?<T>(step: string, work: () => Promise<T>, detail?: string): Promise<T>;
}

/** A backup as the driver wrote it: a zstd-compressed SQLite database (a zstd-compressed tar of the data directory on Docker). */
export interface BackupFile {
  path: string;
  sizeBytes: number;
  /** Hex SHA-256 of the compressed file, the bytes a download serves. */
  sha256: string;
}

export interface RestoreHooks extends StartHooks {
  /**
   * The service ran when the restore was asked for, so it must run after it, whatever is found
   * now: a restore resumed after a crash finds the service stopped by its own first attempt.
   */
  readonly ranBefore: boolean;
  /**
   * The backup is verified and the service is stopped (if it ran); nothing is replaced yet.
   * The safety backup is taken here, so it holds exactly the data the restore replaces (none
   * when `hasData` is false: a service never started has no database yet). A throw leaves the
   * data as it was and the service is started again if it ran.
   */
  beforeSwap(current: { hasData: boolean }): Promise<void>;
  /**
   * This restore's own name (its operation's id), put on the data it stages, and whether an
   * earlier attempt of it got past the staging (it had begun the safety backup, which comes only
   * after): a driver that finds that data then picks up from the last step that finished instead
   * of staging the backup again with the service stopped (docker/restore-resume.ts).
   */
  readonly resume?: { key: string; stagedBefore: boolean };
}

export interface ServiceDriver {
  readonly name: string;
  provisionServer(server: ServerSpec): Promise<{ rootDir: string }>;
  /** Creates the service's files and database (for an app, its network, volumes and secrets). Idempotent. */
  provision(service: ServiceSpec): Promise<ProvisionResult | void>;
  /** Runs the service; adopts a process of it that is already running instead of starting another. */
  start(service: ServiceSpec, hooks: StartHooks): Promise<RunningService>;
  /** Ends every process of the service. Idempotent. */
  stop(service: ServiceSpec): Promise<void>;
  /** Replaces what runs with `revision`. */
  redeploy(service: ServiceSpec, revision: number, hooks: StartHooks): Promise<RunningService>;
  status(service: ServiceSpec): Promise<ServiceStatus>;
  /** Stops the service and removes its files. Idempotent. */
  destroy(service: ServiceSpec): Promise<void>;
  /**
   * Keeps the credentials the service gives its outgoing-mail server (a copy's mail catcher
   * issues them once and stores only a hash); used from its next start. null forgets them.
   */
  storeMailCredentials(service: ServiceSpec, credentials: { username: string; password: string } | null): Promise<void>;
  /** Values of secrets this driver gave the service (its mail password): never quoted in a failure reason. */
  secretValuesOf?(service: ServiceSpec): Promise<string[]>;
  /**
   * Writes a consistent snapshot of the service's database (SQLite online backup, also while it
   * runs), zstd-compressed, to `destination`, atomically: the file exists whole or not at all.
   * A service never provisioned (the operator's command makes rows only) gets its data first.
   */
  backup(service: ServiceSpec, destination: string): Promise<BackupFile>;
  /**
   * Replaces the service's database with a backup: verifies checksum and integrity before
   * touching anything, swaps the file atomically, restarts the service if it was running.
   * Resolves with the running process, or null when the service was not running. On failure the
   * service keeps its data, and runs again if it ran.
   */
  restore(service: ServiceSpec, backup: { path: string; sha256: string }, hooks: RestoreHooks): Promise<RunningService | null>;
  /** Gives `copy` (not running) a consistent snapshot of `source`'s database. Idempotent. */
  copy(source: ServiceSpec, copy: ServiceSpec): Promise<void>;
  /**
   * How many times the engine restarted the service's containers by its restart policy, in all
   * (the health watcher counts the increases: src/health/crash-loops.ts). Absent, or null: the
   * driver restarts nothing by itself (local processes), so no crash loop is watched for.
   */
  restartCount?(service: ServiceSpec): Promise<number | null>;
  /**
   * For a move (src/engine/actions/move.ts): loads a consistent snapshot of `source`'s data into
   * the same service on another server (`target`: same id, another server, nothing of it
   * running there), replacing whatever of it was there. `source` keeps serving if it runs (the
   * data is read as for a copy). Absent: the driver's services do not move.
   */
  transferData?(source: ServiceSpec, target: ServiceSpec): Promise<{ sizeBytes: number }>;
  /**
   * Removes what of the service is on the server of `service` (its containers, data and
   * network there), never what the control plane keeps of it (secrets, settings, backups):
   * what a move left on the server it left. Idempotent.
   */
  removeFromServer?(service: ServiceSpec): Promise<void>;
}

/**
 * A failure whose `reason` is written for the team (it becomes the operation's reason).
 * `portUnusable`: the service's port is taken by something else, so forget it.
 */
export class DriverError extends Error {
  constructor(readonly reason: string, readonly portUnusable = false, options?: { cause?: unknown }) {
    super(reason, options);
  }
}
