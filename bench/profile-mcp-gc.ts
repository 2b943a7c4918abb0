// What the garbage collector does per call: `node dist/bench/profile-mcp-gc.js [side ...]` (sides:
// rest, legacy, modern, floor-legacy, floor-modern; default all; BENCH_SECONDS sets the load).
// Each side's server runs in its own process with V8's `--trace-gc-nvp`, under the load the MCP
// bench gives (10 connections), and this prints, per request: the bytes young collections
// promoted to the old generation, their pauses, and how many young and full collections ran.
// A call whose objects all die young promotes next to nothing (the REST list: about 40 B); see
// src/mcp/README.md, "Garbage per call", for why an MCP call promoted its result and what fixed it.
// Not a *.bench.js module, so `npm run bench` does not run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startChildServer } from './support/child-server.js';
import { PROFILE_SIDES, profileRequestOf, profileServerOf } from './support/profile-sides.js';
import { seedListServices } from './support/seed.js';

interface GcTotals { scavenges: number; fullCollections: number; promotedBytes: number; scavengePauseMs: number }

/** Sums the `--trace-gc-nvp` lines (`name=value` pairs) of young (`gc=s`) and full (`gc=mc`) collections. */
function addGcLine(totals: GcTotals, line: string): void {
  const fields = new Map(line.split(/\s+/).map((pair) => pair.split('=') as [string, string]));
  const kind = fields.get('gc');
  if (kind === 's') {
    totals.scavenges += 1;
    totals.promotedBytes += Number(fields.get('promoted') ?? 0);
    totals.scavengePauseMs += Number(fields.get('pause') ?? 0);
  } else if (kind === 'mc') {
    totals.fullCollections += 1;
  }
}

const sides: readonly string[] = process.argv.slice(2).length > 0 ? process.argv.slice(2) : PROFILE_SIDES;
const unknown = sides.filter((side) => !(PROFILE_SIDES as readonly string[]).includes(side));
if (unknown.length > 0) throw new Error(`unknown side ${unknown.join(', ')}: the sides are ${PROFILE_SIDES.join(', ')}`);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-profile-mcp-gc-'));
try {
  const fixture = await seedListServices(dataDir);
  console.log(`per request, ${seconds} s at 10 connections after a 2 s warm-up; young collections' promotion and pauses, young and full collections`);
  console.log('side'.padEnd(14), 'req/s'.padStart(6), 'promoted B'.padStart(11), 'pause us'.padStart(9), 'young'.padStart(6), 'full'.padStart(5));
  for (const side of sides) {
    const { script, args } = profileServerOf(side, dataDir);
    const totals: GcTotals = { scavenges: 0, fullCollections: 0, promotedBytes: 0, scavengePauseMs: 0 };
    let measuring = false;
    let pending = '';
    const server = await startChildServer(script, args, ['--trace-gc-nvp'], (text) => {
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      if (measuring) for (const line of lines) addGcLine(totals, line);
    });
    try {
      const request = profileRequestOf(side, server.url, fixture.token);
      await autocannon({ ...request, connections: 10, duration: 2 });
      measuring = true;
      const result = await autocannon({ ...request, connections: 10, duration: seconds });
      measuring = false;
      const ok = result.requests.total - result.non2xx;
      if (ok === 0) throw new Error(`${side}: no request succeeded (${result.non2xx} non-2xx)`);
      console.log(side.padEnd(14), result.requests.average.toFixed(0).padStart(6), (totals.promotedBytes / ok).toFixed(0).padStart(11),
        (totals.scavengePauseMs * 1000 / ok).toFixed(1).padStart(9), String(totals.scavenges).padStart(6), String(totals.fullCollections).padStart(5));
    } finally {
      await server.stop();
    }
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
