// Test fixtures: a real SQLite file in a temp directory (or, in the vitest project "postgres",
// a fresh schema of the real PostgreSQL server: test/support/database.ts), the real HTTP server
// on a free loopback port, and seeded teams and tokens. Nothing of ours is mocked.
// Every answer of a test server to a documented REST operation is recorded, and checked against
// the OpenAPI document the server serves when the suite closes it (openapi-conformance.ts): a
// response the document does not describe fails the suite that provoked it.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createApp, defaultConfig, type App, type AppConfig } from '../../src/app.js';
import { hashPassword } from '../../src/auth/password.js';
import type { PermissionId } from '../../src/auth/permissions.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { createToken } from '../../src/db/repositories/tokens.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import type { AcceptedBy, Plan, Role } from '../../src/db/tables.js';
import { buildHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import { catalog } from '../../tools/index.js';
import { createTestSchema, TEST_POOL_SIZE, testEngine } from './database.js';
import { recordExchanges } from './exchange-recorder.js';
import { conformanceReport } from './openapi-conformance.js';

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'teaminfra-test-'));
}

export interface TestServer {
  app: App;
  server: FastifyInstance;
  baseUrl: string;
  dataDir: string;
  /** The PostgreSQL URL (with its own schema) when the server runs on PostgreSQL. */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Start the engine (worker and reconciliation); close() then stops every ERP service process. */
  engine?: boolean;
}

export async function startTestServer(
  overrides: Partial<AppConfig> = {},
  options: HttpServerOptions = {},
  testOptions: TestServerOptions = {},
): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? tempDataDir();
  // On the PostgreSQL project, a schema of its own, as a fresh data directory is on SQLite.
  const schema = overrides.database === undefined && testEngine() === 'postgres' ? await createTestSchema('server') : undefined;
  const database = overrides.database ?? (schema ? { url: schema.url, poolSize: TEST_POOL_SIZE } : undefined);
  // The backup scheduler ticks only when a test asks (engine.scheduler.tick()): a suite running
  // across 03:00 UTC would otherwise see the default schedule's backups among its operations.
  const engine = { backupScheduleIntervalMs: 0, ...overrides.engine };
  const app = createApp({ ...defaultConfig(dataDir), rateLimit: { limit: 100_000, windowSeconds: 60 }, ...overrides, engine, dataDir, database });
  await app.db.ready();
  if (testOptions.engine) await app.engine.start();
  const server = await buildHttpServer(app, catalog, options);
  const exchanges = recordExchanges(server);
  const baseUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  return {
    app, server, baseUrl, dataDir, databaseUrl: database?.url,
    async close() {
      // Each step says so on stderr when it is slow: a close that hangs names where.
      const step = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
        const started = Date.now();
        const slow = setTimeout(() => console.error(`test server close: ${name} has taken 20 s so far`), 20_000);
        try {
          return await work();
        } finally {
          clearTimeout(slow);
          if (Date.now() - started > 20_000) console.error(`test server close: ${name} took ${Date.now() - started} ms`);
        }
      };
      const undocumented = exchanges.length > 0 ? conformanceReport(await step('reading the OpenAPI document', () => servedDocument(baseUrl)), exchanges) : [];
      await step('closing the HTTP server', () => server.close());
      // Tests leave no process behind: stop services rather than detach them.
      if (testOptions.engine) await step('stopping the engine', () => app.engine.close({ services: 'stop' }));
      await step('closing the app', () => app.close());
      await step('dropping the test schema', async () => schema?.drop());
      rmSync(dataDir, { recursive: true, force: true });
      if (undocumented.length > 0) {
        throw new Error(`The server answered what its OpenAPI document (/docs/api.json) does not describe:\n- ${undocumented.join('\n- ')}`);
      }
    },
  };
}

async function servedDocument(baseUrl: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}/docs/api.json`);
  if (response.status !== 200) throw new Error(`GET /docs/api.json answered ${response.status}.`);
  return (await response.json()) as Record<string, unknown>;
}

export interface SeededTeam {
  teamId: string;
  serverIds: [string, string];
  serviceIds: [string, string];
  /** A copy of serviceIds[0]. */
  copyId: string;
}

/** A team with two servers, a service on each, and a copy of the first service. */
export async function seedTeam(app: App, values: { name?: string; plan?: Plan; timezone?: string } = {}): Promise<SeededTeam> {
  const db = app.db.kysely;
  const teamId = await insertTeam(db, { name: values.name ?? 'Test team', plan: values.plan ?? 'starter', timezone: values.timezone ?? 'UTC' });
  const serverA = await insertServer(db, { teamId, name: 'server-a' });
  const serverB = await insertServer(db, { teamId, name: 'server-b' });
  const serviceA = await insertService(db, { teamId, serverId: serverA, name: 'ERP A' });
  const serviceB = await insertService(db, { teamId, serverId: serverB, name: 'ERP B' });
  const copyId = await insertService(db, { teamId, serverId: serverA, name: 'ERP A copy', parentId: serviceA });
  return { teamId, serverIds: [serverA, serverB], serviceIds: [serviceA, serviceB], copyId };
}

/** Members who sign in to the panel with `password`, one per role, as `<role>@example.com`. */
export async function seedMembers(app: App, teamId: string, password: string, roles: readonly Role[]): Promise<void> {
  const passwordHash = await hashPassword(password);
  for (const role of roles) await upsertMember(app.db.kysely, { teamId, email: `${role}@example.com`, role, passwordHash });
}

/**
 * A completed manual backup row of `serviceId` whose file is `filePath` (written by the caller)
 * holding `bytes`, recorded with `sha256` (the bytes' own unless given); its id.
 */
export async function insertCompletedBackup(
  app: App, row: { id?: string; teamId: string; serviceId: string; filePath: string; bytes: Buffer; sha256?: string },
): Promise<string> {
  const id = row.id ?? newId('bak');
  await app.db.kysely.insertInto('backups').values({
    id, team_id: row.teamId, service_id: row.serviceId, state: 'completed', kind: 'manual', size_bytes: row.bytes.length,
    sha256: row.sha256 ?? createHash('sha256').update(row.bytes).digest('hex'), file_path: row.filePath, operation_id: null,
    reason: null, created_at: nowIso(), completed_at: nowIso(),
  }).execute();
  return id;
}

export interface TokenOptions {
  acceptedBy?: AcceptedBy;
  permissions?: PermissionId[] | 'full';
  services?: string[] | null;
  servers?: string[] | null;
  expiresOn?: string | null;
  name?: string;
  needsApproval?: string[];
}

export async function makeToken(app: App, teamId: string, options: TokenOptions = {}): Promise<{ id: string; value: string }> {
  const permissions = options.permissions ?? 'full';
  return createToken(app.db.kysely, {
    teamId,
    name: options.name ?? 'test token',
    source: 'panel',
    acceptedBy: options.acceptedBy ?? 'both',
    fullAccess: permissions === 'full',
    permissions: permissions === 'full' ? [] : permissions,
    serviceIds: options.services ?? null,
    serverIds: options.servers ?? null,
    expiresOn: options.expiresOn ?? null,
    createdByUserId: null,
    needsApproval: options.needsApproval ?? [],
  });
}

/** GET with a bearer token; returns status, headers and parsed JSON body. */
export async function getJson(baseUrl: string, path: string, token?: string, headers: Record<string, string> = {}) {
  const response = await fetch(baseUrl + path, {
    headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
