// `teaminfra serve`: the REST API and docs on one HTTP server, until SIGINT or SIGTERM.
import { createApp, defaultConfig } from '../app.js';
import { buildHttpServer } from '../http/server.js';
import { catalog } from '../../tools/index.js';
import { seedDemoIfEmpty } from './demo.js';
import { makeDemoCopy } from './demo-copy.js';
import { describePostgresUrl } from '../db/dialect-postgres.js';
import { defaultNodeName, NODE_NAME } from '../engine/node-name.js';
import { DEFAULT_ENGINE_CONFIG } from '../engine/engine.js';
import { healthIntervalMsFromEnv } from '../health/health-settings.js';
import { moveRollbackMsFromEnv } from '../engine/moves/rollback-window.js';
import { rowRetentionFromEnvForServe } from './row-retention-env.js';
import { backupCacheFromEnv, backupRetentionFromEnv, dataLocationOf, leaseMsFromEnv, nodeGoneMsFromEnv, parseOptions } from './options.js';
import { secureDataDir } from './secure-data-dir.js';
import { sealStoredSecrets } from '../secrets/seal-stored-secrets.js';
import { loadSecretsKeys } from '../secrets/secrets-key.js';
import { UsageError } from './usage.js';
import { engineAddressOption } from './docker-commands.js';
import { terminalRequestLog } from './terminal-request-log.js';

/** The longest `serve` takes to stop after SIGTERM: the longer of the two grace periods (they run side by side), and 10 s to close. */
const STOP_BACKSTOP_MS = Math.max(10_000, DEFAULT_ENGINE_CONFIG.shutdownGraceMs) + 10_000;

export async function runServe(args: string[]): Promise<void> {
  const values = parseOptions(args, {
    port: { type: 'string' }, host: { type: 'string' }, demo: { type: 'boolean' }, node: { type: 'string' }, 'docker-host': { type: 'string' },
  }, 'serve');
  const port = Number(values.port ?? process.env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`serve: --port must be a port number; got "${values.port}".`);
  const host = values.host ?? '127.0.0.1';

  const node = values.node ?? defaultNodeName();
  if (!NODE_NAME.test(node)) {
    throw new UsageError(`serve: the node name "${node}" must be 1 to 63 letters, digits, dots, dashes or underscores; set --node or TEAMINFRA_NODE.`);
  }
  const dockerHost = values['docker-host'] === undefined ? null : engineAddressOption(values['docker-host'], 'serve');
  const location = dataLocationOf(values);
  // Before anything is opened: an earlier version left the directory and its files readable by all.
  secureDataDir(location.dataDir, { tighten: true });
  const databaseName = location.database ? `PostgreSQL ${describePostgresUrl(location.database.url)}` : `SQLite in ${location.dataDir}`;

  const secretsKeys = loadSecretsKeys(location.dataDir);
  const health = healthFromEnv();
  refuseBadMoveWindow();
  const app = createApp({
    ...defaultConfig(location.dataDir), database: location.database, engine: { node, newServersDockerHost: dockerHost, ...leaseMsFromEnv(), ...nodeGoneMsFromEnv(), ...backupRetentionFromEnv(), ...backupCacheFromEnv(), rowRetention: rowRetentionFromEnvForServe(), ...health.config }, secretsKeys,
  }, (error, capability) =>
    console.error(JSON.stringify({ level: 'error', msg: 'internal error', capability, reason: error.internalReason })));
  // PostgreSQL connects on first use: fail here, with the address, rather than on the first request.
  await app.db.ready().catch(async (error: Error) => {
    await app.close().catch(() => undefined);
    throw new Error(`serve: cannot use the database (${databaseName}): ${error.message}`);
  });
  // Before anything is served: a node with another key stops here; secrets still in clear (an
  // earlier version) or sealed with a previous key are sealed with the current one.
  await sealStoredSecrets(app.db, app.secrets).catch(async (error: Error) => {
    await app.close().catch(() => undefined);
    throw new Error(`serve: ${error.message}`);
  });
  const demo = values.demo ? await seedDemoIfEmpty(app.db.kysely) : undefined;
  // The mail catcher first: copies started by the engine send their mail to it.
  const smtpPort = await app.mailCatcher.start().catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`serve: the mail catcher cannot listen on ${app.config.mail.host}:${app.config.mail.port} (${error.code ?? error.message}); set TEAMINFRA_SMTP_PORT to a free port (0 picks one).`);
  });
  // Before listening: the first request already sees services reconciled with what really runs.
  await app.engine.start();
  // Copies still running from before mail the catcher on their engine's bridge: listen there again (not waited for: an engine may be slow).
  void app.containerMail.listenForCopies(app.db.kysely).then(
    (failures) => failures.forEach((reason) => console.error(JSON.stringify({ level: 'error', msg: 'mail catcher not reachable by copies', reason }))),
    (error: Error) => console.error(JSON.stringify({ level: 'error', msg: 'mail catcher not reachable by copies', reason: error.message })),
  );
  app.webhooks.start();
  app.decisions.start();
  // /mcp answers to loopback names, the address it listens on, and the names the operator lists.
  const allowedHosts = [host, ...(process.env.TEAMINFRA_ALLOWED_HOSTS?.split(',').map((name) => name.trim()).filter(Boolean) ?? [])];
  // JSON lines for a log collector; readable lines in a terminal, where the banner comes first.
  const terminalLog = process.stdout.isTTY && process.env.TEAMINFRA_LOG_FORMAT !== 'json' ? terminalRequestLog(process.stdout) : undefined;
  const logger = { level: process.env.LOG_LEVEL ?? 'info', ...(terminalLog ? { stream: terminalLog.stream } : {}) };
  const server = await buildHttpServer(app, catalog, { logger, allowedHosts });
  // Before the address is printed, so that the demo's first caught email is there to read.
  const demoCopy = demo && await makeDemoCopy(server, demo.token, demo.productionId).catch((error: Error) => error);
  const address = await server.listen({ port, host });
  health.listening(address);

  // One write, so whoever watches for the "serving on" line also has the lines after it.
  const lines = [
    `teaminfra serving on ${address}`,
    `  REST API:      ${address}/api/service-erp`,
    `  API docs:      ${address}/docs  (OpenAPI: ${address}/docs/api.json)`,
    `  Panel:         ${address}/panel`,
    `  Mail catcher:  smtp://${app.config.mail.host}:${smtpPort} (copies only)`,
    `  Node:          ${node} (database: ${databaseName})`,
  ];
  if (demo) {
    lines.push(
      '',
      'Demo team created (shown once, keep it now):',
      `  team:          ${demo.teamId}`,
      `  owner sign-in: ${demo.ownerEmail} / ${demo.ownerPassword}`,
      `  API token:     ${demo.token}`,
      demoCopy instanceof Error
        ? `  staging copy:  not made (${demoCopy.message})`
        : `  staging copy:  ${demoCopy?.copyId} (running; its mail catcher holds a password-reset email)`,
      '',
      `Try: curl -H "Authorization: Bearer ${demo.token}" -H "Accept: application/json" ${address}/api/service-erp`,
      ...(demoCopy instanceof Error ? [] : [`     curl -H "Authorization: Bearer ${demo.token}" ${address}/api/service-erp/${demoCopy?.copyId}/emails`]),
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
  terminalLog?.showRequests();

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs (an engine that never answers, a database that stopped), the process ends:
    // the requests and the operations each have a grace period, this is the backstop past both.
    setTimeout(() => {
      console.error(JSON.stringify({ level: 'error', msg: 'stopped without finishing: shutdown took longer than its grace periods' }));
      process.exit(1);
    }, STOP_BACKSTOP_MS).unref();
    // Requests in progress and operations in progress get their grace periods at the same time;
    // operations still running then are resumed by the next start. ERP services keep running
    // and the next `serve` adopts them (src/engine/README.md).
    await Promise.all([server.close(), app.engine.close()]);
    await app.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

/** TEAMINFRA_MOVE_ROLLBACK_HOURS is read at each move's switch: a bad value stops serve now, not a move later. */
function refuseBadMoveWindow(): void {
  try {
    moveRollbackMsFromEnv();
  } catch (error) {
    throw new UsageError(`serve: ${(error as Error).message}`);
  }
}

/**
 * The watcher's interval (TEAMINFRA_HEALTH_INTERVAL_S), and the panel's address its emails link
 * to: TEAMINFRA_PUBLIC_URL, else the address serve listens on, known once it does.
 */
function healthFromEnv() {
  let healthIntervalMs: number;
  try {
    healthIntervalMs = healthIntervalMsFromEnv();
  } catch (error) {
    throw new UsageError(`serve: ${(error as Error).message}`);
  }
  const configured = DEFAULT_ENGINE_CONFIG.panelUrl();
  let listeningOn: string | null = null;
  return {
    config: { healthIntervalMs, panelUrl: () => configured ?? listeningOn },
    listening(address: string) {
      listeningOn = address;
    },
  };
}
