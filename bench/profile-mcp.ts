// Where the time of one MCP `tools/call list_erp_services` goes: `node dist/bench/profile-mcp.js
// [legacy|modern|rest|floor-legacy|floor-modern]` (default legacy; PROFILE_KEEP=1 keeps the profile,
// BENCH_SECONDS sets the load). The floor-* sides profile baseline (d), servers/sdk-floor.ts.
// Loads teaminfra's server (own process, --cpu-prof, no request log) with the same request the
// MCP bench sends, reports the server's CPU per request, and sums the profile's self time by
// function and by package. Not a *.bench.js module, so `npm run bench` does not run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startChildServer } from './support/child-server.js';
import { summarizeProfileIn } from './support/cpu-profile.js';
import { profileRequestOf, profileServerOf } from './support/profile-sides.js';
import { seedListServices } from './support/seed.js';

const side = process.argv[2] ?? 'legacy';
const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-profile-mcp-'));
const profileDir = join(dataDir, 'profiles');
try {
  const fixture = await seedListServices(dataDir);
  const { script, args } = profileServerOf(side, dataDir);
  const server = await startChildServer(script, args, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  try {
    const request = profileRequestOf(side, server.url, fixture.token);
    await autocannon({ ...request, connections: 10, duration: 2 });
    const cpuBefore = await server.cpuMicros();
    const result = await autocannon({ ...request, connections: 10, duration: Number(process.env.BENCH_SECONDS ?? 6) });
    const cpu = (await server.cpuMicros()) - cpuBefore;
    const ok = result.requests.total - result.non2xx;
    console.log(`${side}: ${result.requests.average.toFixed(0)} req/s, ${(cpu / ok).toFixed(0)} us CPU/request under the profiler, ${result.non2xx} non-2xx`);
  } finally {
    await server.stop();
  }
  summarizeProfileIn(profileDir, `mcp-${side}`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
