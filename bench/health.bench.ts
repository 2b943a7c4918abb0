// Issue 43: the health watcher at 10,000 running services, whose health paths one listener (its
// own process) answers. One teaminfra server process serves GET /api/service-erp at a fixed rate
// (a steady load, so that p99 is the requests' own latency and not a queue the load made), in
// rounds that alternate the watcher off and on (drift on a shared machine falls on both). Figures:
// the list's p99 with the watcher against without it (target: moves by less than 10%), and the
// watcher's passes (each checks every service; target: each ends within the interval, and they
// start an interval apart: it keeps its interval).
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, defaultConfig } from '../src/app.js';
import { newId, nowIso } from '../src/db/ids.js';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertTeam } from '../src/db/repositories/teams.js';
import { createToken } from '../src/db/repositories/tokens.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { envNumber } from './support/settings.js';

const MAX_P99_RATIO = 1.1;

interface Pass { startedAt: number; durationMs: number; checked: number; ran: boolean }

async function seed(dataDir: string, services: number, listenerPort: number): Promise<string> {
  const app = createApp(defaultConfig(dataDir));
  try {
    await app.db.ready();
    const db = app.db.kysely;
    const teamId = await insertTeam(db, { name: 'Watched at scale', plan: 'enterprise', timezone: 'UTC' });
    const serverId = await insertServer(db, { teamId, name: 'local' });
    const now = nowIso();
    for (let done = 0; done < services; done += 1000) {
      const rows = Array.from({ length: Math.min(1000, services - done) }, (_, i) => ({
        id: newId('svc'), team_id: teamId, server_id: serverId, parent_id: null, name: `ERP ${done + i + 1}`, state: 'running' as const,
        revision: 1, port: listenerPort, pid: null, outgoing_smtp: null, mail_username: null, mail_password_hash: null, state_reason: null,
        created_at: now, updated_at: now, deleted_at: null, published_host: null, app: null, health: 'healthy' as const, health_since: now,
      }));
      await db.insertInto('erp_services').values(rows).execute();
    }
    return (await createToken(db, {
      teamId, name: 'bench', source: 'panel', acceptedBy: 'api', fullAccess: true, permissions: [], serviceIds: null, serverIds: null,
      expiresOn: null, createdByUserId: null,
    })).value;
  } finally {
    await app.close();
  }
}

/** `seconds` of GET /api/service-erp at `rate` a second; each answer's latency in ms. */
async function listAtRate(server: ChildServer, token: string, rate: number, seconds: number): Promise<{ latencies: number[]; failed: number }> {
  const instance = autocannon({
    url: `${server.url}/api/service-erp?limit=50`, headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    connections: 10, duration: seconds, overallRate: rate,
  });
  const latencies: number[] = [];
  let failed = 0;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200) latencies.push(ms);
    else failed += 1;
  });
  const result = await instance;
  return { latencies, failed: failed + result.errors };
}

const p99 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? NaN;
};

export default async function healthBench() {
  const services = Math.round(envNumber('BENCH_HEALTH_SERVICES', 10_000));
  const intervalMs = envNumber('BENCH_HEALTH_INTERVAL_S', 10) * 1000;
  const rounds = Math.round(envNumber('BENCH_HEALTH_ROUNDS', 3));
  const seconds = envNumber('BENCH_HEALTH_SECONDS', (2 * intervalMs) / 1000);
  const rate = Math.round(envNumber('BENCH_HEALTH_RATE', 300));
  const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-bench-health-'));
  const children: ChildServer[] = [];
  try {
    const listener = await startChildServer('health-listener.js', []);
    children.push(listener);
    const seedStarted = performance.now();
    const token = await seed(dataDir, services, Number(new URL(listener.url).port));
    console.log(`seeded ${services} running services in ${Math.round(performance.now() - seedStarted)} ms`);
    const server = await startChildServer('health-watched.js', [dataDir, String(intervalMs)]);
    children.push(server);
    await listAtRate(server, token, rate, 2);
    const off: number[] = [];
    const on: number[] = [];
    let failed = 0;
    for (let round = 1; round <= rounds; round++) {
      const without = await listAtRate(server, token, rate, seconds);
      await server.ask('watch-on', 'watch-on');
      const withWatcher = await listAtRate(server, token, rate, seconds);
      await server.ask('watch-off', 'watch-off');
      off.push(...without.latencies);
      on.push(...withWatcher.latencies);
      failed += without.failed + withWatcher.failed;
      console.log(`round ${round}: list p99 ${p99(without.latencies).toFixed(2)} ms without the watcher, ${p99(withWatcher.latencies).toFixed(2)} ms with it`);
    }
    const { passes } = await server.ask<{ passes: Pass[] }>('passes', 'passes');
    const answered = (await listener.ask<{ answered: number }>('count', 'count')).answered;
    const full = passes.filter((pass) => pass.ran && pass.checked === services);
    const longestPassMs = Math.max(...passes.map((pass) => pass.durationMs));
    // Passes of one round follow each other an interval apart; a round's first starts when it is switched on.
    const gaps = passes.slice(1).map((pass, i) => pass.startedAt - passes[i]!.startedAt).filter((gap) => gap < 2 * intervalMs);
    const figures = {
      services, intervalMs, rate, seconds, rounds,
      listP99WithoutMs: p99(off), listP99WithMs: p99(on), failedRequests: failed,
      passes: passes.length, fullPasses: full.length, longestPassMs, meanPassMs: passes.reduce((total, pass) => total + pass.durationMs, 0) / passes.length,
      longestGapMs: gaps.length ? Math.max(...gaps) : NaN, checksAnswered: answered,
      ratios: { listP99WithOverWithout: p99(on) / p99(off), longestPassOverInterval: longestPassMs / intervalMs },
    };
    const met = figures.ratios.listP99WithOverWithout < MAX_P99_RATIO && longestPassMs <= intervalMs && full.length === passes.length && failed === 0;
    console.log(`watcher: ${passes.length} passes of ${services} checks, longest ${Math.round(longestPassMs)} ms, mean ${Math.round(figures.meanPassMs)} ms ` +
      `(interval ${intervalMs} ms; longest gap between starts ${Math.round(figures.longestGapMs)} ms); ${answered} checks answered`);
    console.log(`list p99 at ${rate} req/s: ${figures.listP99WithoutMs.toFixed(2)} ms without the watcher, ${figures.listP99WithMs.toFixed(2)} ms with it ` +
      `(ratio ${figures.ratios.listP99WithOverWithout.toFixed(3)}, target < ${MAX_P99_RATIO}); target ${met ? 'met' : 'NOT met'}`);
    return { ...figures, target: { met, maxP99Ratio: MAX_P99_RATIO } };
  } finally {
    for (const child of children.reverse()) await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
