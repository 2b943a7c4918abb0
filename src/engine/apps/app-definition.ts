// The typed model of an app definition: what the Docker driver reads, and nothing else does.
// It is built from a Compose file in three steps (compose-go's order): parse the YAML
// (parse-app-definition.ts), refuse what teaminfra does not run and validate the rest with zod
// (compose-refusals.ts, compose-schema.ts), then build this model (build-app-definition.ts).
// Every command is an argument array: nothing here is ever handed to a shell.

/** A value that may name variables the driver fills in per service (`${DB_PASSWORD}`), kept as parts. */
export type TemplatePart = { text: string } | { variable: string };
export type Template = readonly TemplatePart[];

/** A Compose duration (`30s`, `1m30s`) in milliseconds. */
export type Millis = number;

export interface VolumeMount {
  /** A named volume of the definition (the driver names the engine's volume per service). */
  volume: string;
  /** The absolute path in the container. */
  target: string;
  readOnly: boolean;
}

export interface Healthcheck {
  /** The program and its arguments, run by the engine inside the container (Compose `["CMD", ...]`). */
  test: string[];
  intervalMs: Millis;
  timeoutMs: Millis;
  retries: number;
  startPeriodMs: Millis;
}

export type DependencyCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully';

export interface AppContainer {
  /** The Compose service name: also the container's host name on the service's own network. */
  name: string;
  image: string;
  /** Replaces the image's CMD when set. */
  command: string[] | null;
  environment: Readonly<Record<string, Template>>;
  volumes: VolumeMount[];
  healthcheck: Healthcheck | null;
  dependsOn: { service: string; condition: DependencyCondition }[];
  /** `user[:group]` the processes run as; null: the image's own. */
  user: string | null;
}

/**
 * A command of the definition: run as a one-off container of `service` (its image, environment,
 * volumes and the service's network), like `docker compose run SERVICE ...`. Snapshot, verify and
 * restore run with their working directory at the backup's directory, so they name files in it
 * relatively (`pg_dump -Fc -f database.dump`).
 */
export interface AppCommand {
  service: string;
  command: string[];
  /** The user it runs as; null: the service's. */
  user: string | null;
  /**
   * True for the image contract's commands (contract-definition.ts): the first argument replaces
   * the image's entrypoint, as the contract's labels always meant. A Compose command replaces
   * only the CMD, as `docker compose run` does.
   */
  replacesEntrypoint?: boolean;
}

// No `destroy`: deleting a service removes its containers, volumes and network, and nothing else
// of it exists to clean up; a command the driver never ran would be one the author counts on.
export const COMMAND_NAMES = ['snapshot', 'verify', 'restore', 'neutralize', 'migrate'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export interface AppDefinition {
  /** The name teams pick it by (`app` of create_erp_service). */
  name: string;
  /** In start order: every container after the ones it depends on. */
  containers: AppContainer[];
  /** The named volumes, each mounted by at least one container. */
  volumes: string[];
  /** The one container people reach: its port is published and is the service's `url`. */
  web: { service: string; port: number; healthPath: string };
  /** The companion database, if any: its volumes are backed up by the snapshot command, not as files. */
  database: { service: string } | null;
  commands: Readonly<Partial<Record<CommandName, AppCommand>>>;
  deadlines: { startMs: Millis; migrateMs: Millis };
  /** Secrets generated per service (sealed), which environment values may name as `${NAME}`. */
  secrets: string[];
  /** The first login a created service gives its creator (its password: the ADMIN_PASSWORD secret); null: none. */
  initialCredentials: InitialCredentialsTemplate | null;
  /**
   * Set only for a definition made from an image's contract labels (contract-definition.ts):
   * its one volume keeps the engine name services of such images always had
   * (`teaminfra-data-ID`), and a backup they took before their archives had a manifest (the
   * data directory's files at the archive's top) is read as that volume's files.
   */
  imageContract?: { dataDirLabel: string };
}

/** The login and the other fields of a first login (a company's name), filled in when the service is created. */
export interface InitialCredentialsTemplate {
  login: Template;
  fields: Readonly<Record<string, Template>>;
}

/** Variables every container's environment may name, filled in by the driver per service. */
export const BUILT_IN_VARIABLES = [
  'TEAMINFRA_SERVICE_ID', 'TEAMINFRA_SERVICE_NAME', 'TEAMINFRA_REVISION', 'TEAMINFRA_PUBLIC_URL',
  'TEAMINFRA_SMTP_HOST', 'TEAMINFRA_SMTP_PORT', 'TEAMINFRA_SMTP_USER', 'TEAMINFRA_SMTP_PASSWORD',
  // The same relay as one URI (smtp-uri.ts), for apps configured by one (Tryton's [email] uri).
  'TEAMINFRA_SMTP_URI',
] as const;

/** The built-ins known when a service is created, which its initial credentials may name (beside its secrets). */
export const CREDENTIAL_VARIABLES = ['TEAMINFRA_SERVICE_ID', 'TEAMINFRA_SERVICE_NAME'] as const;

export const DEFAULT_DEADLINES = { startMs: 60_000, migrateMs: 600_000 } as const;
