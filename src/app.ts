// The running application's shared parts: database, audit trail, configuration. Built once by
// `teaminfra serve` (or a test) and handed to every adapter.
import type { CoreDeps } from './core/invoke.js';
import { openCore } from './core-deps.js';
import type { DatabaseOptions, Db } from './db/connect.js';
import { createEngine, type Engine, type EngineConfig } from './engine/engine.js';
import { rateLimitFromEnv, type RateLimitConfig } from './channel-neutral/rate-limit.js';
import { ContainerMailAddress } from './mail/container-mail-address.js';
import { MailCatcher } from './mail/mail-catcher.js';
import { mailConfigFromEnv, type MailConfig } from './mail/mail-config.js';
import { DecisionSweeper } from './decisions/decision-sweeper.js';
import { clientMetadataConfigFromEnv, type ClientMetadataConfig } from './oauth/client-metadata-fetcher.js';
import { SecretBox } from './secrets/secret-box.js';
import { loadSecretsKeys, type SecretsKeys } from './secrets/secrets-key.js';
import { webhookConfigFromEnv, type WebhookConfig } from './webhooks/config.js';
import { WebhookWorker } from './webhooks/delivery-worker.js';

export interface AppConfig {
  /** This node's files (local ERP services, backups); and the SQLite database unless `database` says otherwise. */
  dataDir: string;
  /** PostgreSQL (`url`, pool size), shared by several nodes; absent: SQLite in `dataDir`. */
  database?: DatabaseOptions;
  rateLimit: RateLimitConfig;
  /** Largest JSON request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Engine tuning (node name, lease, poll, concurrency, timeouts); defaults in src/engine/engine.ts. */
  engine?: Partial<EngineConfig>;
  mail: MailConfig;
  webhooks: WebhookConfig;
  /** How the sign-in server fetches clients' metadata documents (limits, and the test-only switches). */
  clientMetadata: ClientMetadataConfig;
  /** The keys that seal secrets in the database; default: TEAMINFRA_SECRETS_KEY(_PREVIOUS), else `dataDir`/secrets.key. */
  secretsKeys?: SecretsKeys;
}

export interface App extends CoreDeps {
  db: Db;
  config: AppConfig;
  /** Runs ERP services. Not started by createApp: `serve` (or a test that wants it) calls start(). */
  engine: Engine;
  /** The SMTP listener that keeps copies' mail. Not started by createApp: `serve` starts it. */
  mailCatcher: MailCatcher;
  /** Where Docker servers' containers reach the mail catcher (it listens there too, once asked). */
  containerMail: ContainerMailAddress;
  /** Delivers webhook events. Not started by createApp: `serve` starts it. */
  webhooks: WebhookWorker;
  /** Seals and reveals the secrets kept in the database (webhook secrets, the sign-in server's keys). */
  secrets: SecretBox;
  /** Expires decisions and settles operations whose approval ended. Not started by createApp: `serve` starts it. */
  decisions: DecisionSweeper;
  close(): Promise<void>;
}

export function defaultConfig(dataDir: string): AppConfig {
  return {
    dataDir, rateLimit: rateLimitFromEnv(), bodyLimitBytes: 64 * 1024, mail: mailConfigFromEnv(), webhooks: webhookConfigFromEnv(),
    clientMetadata: clientMetadataConfigFromEnv(),
  };
}

export function createApp(config: AppConfig, onInternalError?: CoreDeps['onInternalError']): App {
  const core = openCore(config.dataDir, config.database, onInternalError);
  const { db, audit, approvals } = core;
  const secrets = new SecretBox(config.secretsKeys ?? loadSecretsKeys(config.dataDir));
  const mailCatcher = new MailCatcher(db.kysely, config.mail);
  // Copies send their mail to the catcher; its port is known only once `serve` has started it.
  const copyMailRelay = () => (mailCatcher.port > 0 ? `${config.mail.host}:${mailCatcher.port}` : null);
  // A container reaches the catcher where its engine's machine lets it (container-mail-address.ts).
  const containerMail = new ContainerMailAddress(mailCatcher, { host: config.mail.host, addressForContainers: config.mail.addressForContainers });
  const engine = createEngine(db, secrets, { copyMailRelay, containerMailRelay: (docker) => containerMail.of(docker), ...config.engine });
  const webhooks = new WebhookWorker(db.kysely, config.webhooks, secrets);
  const decisions = new DecisionSweeper({ db, audit, onInternalError, approvals });
  return {
    db,
    audit,
    config,
    onInternalError,
    approvals,
    engine,
    observer: engine.observer,
    mailCatcher,
    containerMail,
    webhooks,
    secrets,
    decisions,
    async close() {
      await decisions.stop();
      // Detaches running services (src/engine/README.md): they keep running and are adopted next start.
      await engine.close();
      await webhooks.stop();
      await mailCatcher.stop();
      await core.close();
    },
  };
}
