// Each step of one MCP `tools/call list_erp_services`, timed alone in one process, beside what
// baseline (d) (servers/sdk-floor.ts) does for the same step: `node dist/bench/profile-mcp-steps.js`.
// End to end, ours/(d) moves by a few percent from run to run on these shared cores, and a
// sampling profile blames the wrong functions at this scale (it moved tens of microseconds
// between functions that cost the same alone); a step run 20,000 times in a loop, on the same
// seeded data, is steady to a fraction of a microsecond. What it cannot show is what only a
// real server has (sockets, Fastify's own work, garbage collection under load): the bench does.
// Not a *.bench.js module, so `npm run bench` does not run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Server } from '@modelcontextprotocol/server';
import { createApp, defaultConfig } from '../src/app.js';
import { RateLimiter } from '../src/channel-neutral/rate-limit.js';
import { admit, invoke } from '../src/core/invoke.js';
import { DATABASE_FILE } from '../src/db/connect.js';
import { hostPolicyOf, hostRefusal } from '../src/mcp/allowed-hosts.js';
import { eraRouteOf } from '../src/mcp/era-route.js';
import { rpcBodyOf } from '../src/mcp/json-rpc.js';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { invalidParamsOf } from '../src/mcp/request-screen.js';
import { echoableIdOf } from '../src/mcp/rpc-errors.js';
import { auditActionOf, headerMismatch, rateBucketOf, routingOf } from '../src/mcp/standard-headers.js';
import { stepUpFor } from '../src/mcp/step-up.js';
import { buildToolCatalog } from '../src/mcp/tool-definitions.js';
import { successResult } from '../src/mcp/tool-results.js';
import { catalog } from '../tools/index.js';
import { floorReads } from './servers/sdk-floor-reads.js';
import { LIST_SERVICES_CALL, mcpListRequest } from './support/mcp-list-request.js';
import { seedListServices } from './support/seed.js';

const CALLS = 10_000;
const ROUNDS = 7;

/** Microseconds per call of each side, the median of ROUNDS loops of CALLS, the sides alternating (load moves both alike). */
async function microsPerCall(sides: readonly (() => unknown)[]): Promise<number[]> {
  for (const step of sides) for (let i = 0; i < 3000; i++) await step();
  const rounds = sides.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, step] of sides.entries()) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) await step();
      rounds[index]!.push(Number(process.hrtime.bigint() - start) / CALLS / 1000);
    }
  }
  return rounds.map((times) => times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!);
}

const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-profile-steps-'));
const app = createApp({ ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000_000, windowSeconds: 60 } });
try {
  const fixture = await seedListServices(dataDir);
  await app.db.ready();
  const floorDb = new SQLite(join(dataDir, DATABASE_FILE));
  const floor = floorReads(floorDb);
  const tools = buildToolCatalog(catalog);
  const capability = catalog.find((entry) => entry.name === 'list_erp_services')!;
  const limiter = new RateLimiter({ limit: 1_000_000_000, windowSeconds: 60 });
  const hosts = hostPolicyOf([]);
  const host = '127.0.0.1:8080';
  const request = mcpListRequest(`http://${host}`, fixture.token, 'legacy');
  const headers: Record<string, string> = { ...request.headers, host };
  const body = request.body;
  const principal = await admit(app, { bearer: fixture.token, channel: 'mcp' }, 'tools/call');
  const floorToken = floor.tokenOf(request.headers.authorization)!;
  const credentials = { bearer: fixture.token, channel: 'mcp' as const, admitted: principal };

  const steps: { step: string; ours: () => unknown; floor?: () => unknown }[] = [
    {
      step: 'token: admit() / (d) hash, row and checks',
      ours: () => admit(app, { bearer: fixture.token, channel: 'mcp' }, 'tools/call'),
      floor: () => floor.tokenOf(request.headers.authorization),
    },
    {
      step: 'list: invoke() and its result / (d) rows and result',
      ours: async () => successResult(await invoke(capability, { limit: 50 }, credentials, app)),
      floor: () => {
        const output = floor.listServices(floorToken, 50);
        return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
      },
    },
    {
      step: 'server per request: createMcpServer() / (d) Server and one handler',
      ours: () => createMcpServer(tools, app, fixture.token, { era: 'legacy', admitted: principal }),
      floor: () => new Server({ name: 'floor', version: '1' }, { capabilities: { tools: {} } }).setRequestHandler('tools/call', async () => ({ content: [] })),
    },
    { step: 'Host and Origin', ours: () => hostRefusal(hosts, host, undefined, '127.0.0.1') },
    {
      step: 'rate limit (its two headers on a stand-in)',
      ours: () => limiter.admitRequest(fixture.token, '127.0.0.1', { header: () => undefined }, rateBucketOf(routingOf(headers))),
    },
    {
      step: 'reading the request / (d) JSON.parse',
      ours: () => {
        const read = rpcBodyOf({ body, headers } as never);
        if ('status' in read) throw new Error('the request was refused');
        auditActionOf(routingOf(headers));
        echoableIdOf(read.parsed);
        headerMismatch(routingOf(headers), read.messages);
        stepUpFor(tools, principal, read.messages);
        return eraRouteOf(headers, read);
      },
      floor: () => JSON.parse(body),
    },
    { step: 'request screen', ours: () => invalidParamsOf(LIST_SERVICES_CALL, 'legacy') },
  ];

  console.log('step'.padEnd(70), 'ours us', '(d) us', 'ours - (d)');
  let extra = 0;
  for (const { step, ours, floor: theirs } of steps) {
    const [oursMicros = 0, floorMicros = 0] = await microsPerCall(theirs ? [ours, theirs] : [ours]);
    extra += oursMicros - floorMicros;
    console.log(step.padEnd(70), oursMicros.toFixed(2).padStart(7), (theirs ? floorMicros.toFixed(2) : '-').padStart(6), (oursMicros - floorMicros).toFixed(2).padStart(10));
  }
  console.log(`ours spends ${extra.toFixed(1)} us more than (d) in these steps of one call`);
  floorDb.close();
} finally {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
