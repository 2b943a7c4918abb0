// An in-process teaminfra with its engine running, a team and a full-access token: what the
// engine and backup benchmarks drive over HTTP. close() stops every service it started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
  /** One REST call with the bench token; the answer's status and JSON body. */
  call(method: string, path: string, body?: object): Promise<{ status: number; body: Record<string, any> }>;
  /** An action from its request to the end of its operation (polled every `pollMs`), which must succeed. */
  timed(method: string, path: string, body?: object, pollMs?: number): Promise<{ ms: number; operation: Record<string, any> }>;
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
  const call = async (method: string, path: string, body?: object) => {
    const response = await fetch(baseUrl + path, {
      method, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const timed = async (method: string, path: string, body?: object, pollMs = 5) => {
    const started = performance.now();
    const accepted = await call(method, path, body);
    if (accepted.status !== 202) throw new Error(`${method} ${path} answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
    for (;;) {
      const { body: operation } = await call('GET', `/api/operations/${accepted.body.id}`);
      if (operation.state === 'failed') throw new Error(`${method} ${path} failed: ${operation.reason}`);
      if (operation.state === 'succeeded') return { ms: performance.now() - started, operation };
      await sleep(pollMs);
    }
  };
  return {
    app, baseUrl, dataDir, teamId, token, call, timed,
    async close() {
      await server.close();
      await app.engine.close({ services: 'stop' });
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
