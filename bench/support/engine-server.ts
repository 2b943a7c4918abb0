// An in-process teaminfra with its engine running, a team and a full-access token: what the
// engine and backup benchmarks drive over HTTP. close() stops every service it started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { createToken } from '../../src/db/repositories/tokens.js';
import { buildHttpServer } from '../../src/http/server.js';
import { catalog } from '../../tools/index.js';

export interface EngineBenchServer {
  app: App;
  baseUrl: string;
  dataDir: string;
  teamId: string;
  token: string;
  close(): Promise<void>;
}

export async function startEngineBenchServer(name: string): Promise<EngineBenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `teaminfra-bench-${name}-`));
  const app = createApp({ ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000, windowSeconds: 60 }, engine: { reconcileIntervalMs: 0 } });
  await app.engine.start();
  const server = await buildHttpServer(app, catalog, { logger: false });
  const baseUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  const teamId = await insertTeam(app.db.kysely, { name: 'Bench', plan: 'business', timezone: 'UTC' });
  const token = (await createToken(app.db.kysely, {
    teamId, name: 'bench', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [],
    serviceIds: null, serverIds: null, expiresOn: null, createdByUserId: null,
  })).value;
  return {
    app, baseUrl, dataDir, teamId, token,
    async close() {
      await server.close();
      await app.engine.close({ services: 'stop' });
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
