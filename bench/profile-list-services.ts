// Where the time of GET /api/service-erp goes: `node dist/bench/profile-list-services.js`
// (PROFILE_LOGGER=off for the server without its request log; PROFILE_KEEP=1 keeps the profile).
// 1. Runs the core in a tight loop, in process, and times its parts (authenticate, the list
//    query, the whole invoke) against the bare prepared statements baseline (b) uses.
// 2. Loads teaminfra's server (own process, started with --cpu-prof) with autocannon and sums
//    the profile's self time by function and by package.
// Not a *.bench.js module, so `npm run bench` does not run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, defaultConfig } from '../src/app.js';
import { authenticate } from '../src/core/authenticate.js';
import { invoke } from '../src/core/invoke.js';
import { listReachableServices } from '../src/db/repositories/services.js';
import { findTokenWithTeamByHash } from '../src/db/repositories/tokens.js';
import { hashTokenValue } from '../src/auth/token-format.js';
import listErpServices from '../tools/services/list-erp-services.js';
import { startChildServer } from './support/child-server.js';
import { measure } from './support/load.js';
import { seedListServices } from './support/seed.js';
import { summarizeProfileIn } from './support/cpu-profile.js';

async function time(label: string, iterations: number, body: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(2000, iterations); i++) await body();
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await body();
  const micros = ((performance.now() - started) * 1000) / iterations;
  console.log(`${label.padEnd(58)}${micros.toFixed(1).padStart(8)} us`);
  return micros;
}

async function tightLoop(dataDir: string, token: string) {
  const app = createApp(defaultConfig(dataDir));
  try {
    const db = app.db;
    const principal = await authenticate(db.kysely, token);
    const hash = hashTokenValue(token);
    if (!db.sqlite) throw new Error('this profile reads SQLite directly');
    const findToken = db.sqlite.prepare('SELECT id, team_id FROM api_tokens WHERE token_hash = ?');
    const list = db.sqlite.prepare(`SELECT id, name, server_id, parent_id, state, revision, port, created_at, updated_at
      FROM erp_services WHERE team_id = ? AND deleted_at IS NULL
      AND (id IN (SELECT service_id FROM api_token_services WHERE token_id = ?)
           OR parent_id IN (SELECT service_id FROM api_token_services WHERE token_id = ?))
      AND parent_id IS NULL ORDER BY id LIMIT ?`);
    const n = 5000;
    console.log('\nin-process, per call:');
    await time('sha256 of the bearer', n * 10, () => createHash('sha256').update(token).digest('hex'));
    await time('(b) token lookup, prepared statement', n * 4, () => findToken.get(hash));
    await time('(b) list query, prepared statement (21 rows)', n, () => list.all(principal.teamId, principal.tokenId, principal.tokenId, 51));
    await time('findTokenWithTeamByHash (Kysely)', n, () => findTokenWithTeamByHash(db.kysely, hash));
    await time('authenticate()', n, () => authenticate(db.kysely, token));
    await time('listReachableServices (Kysely)', n, () => listReachableServices(db.kysely, principal.reach, { limit: 50 }, null));
    await time('invoke(list_erp_services)', n, () =>
      invoke(listErpServices, { limit: '50' }, { bearer: token, channel: 'api' }, app));
    const output = await invoke(listErpServices, { limit: '50' }, { bearer: token, channel: 'api' }, app);
    await time('JSON.stringify of the page', n, () => JSON.stringify(output));
  } finally {
    await app.close();
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-profile-'));
const profileDir = join(dataDir, 'profiles');
try {
  const fixture = await seedListServices(dataDir);
  await tightLoop(dataDir, fixture.token);
  const logging = process.env.PROFILE_LOGGER ?? 'info';
  const server = await startChildServer('ours.js', [dataDir, logging], ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  try {
    const figures = await measure({
      url: `${server.url}/api/service-erp?limit=50`, headers: { authorization: `Bearer ${fixture.token}`, accept: 'application/json' },
      connections: 10,
    }, 1, Number(process.env.BENCH_SECONDS ?? 6));
    console.log(`\nunder the profiler (logger ${logging}): ${figures.requestsPerSecond.toFixed(0)} req/s, p50 ${figures.p50Ms.toFixed(2)} ms`);
  } finally {
    await server.stop();
  }
  summarizeProfileIn(profileDir, `list-services`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
