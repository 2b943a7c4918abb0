// Issue 28: the panel and every list cost the same at any team size. One team is seeded at 20
// ERP services and another (in its own data directory) at 10,000, with history in proportion
// (200,000 operations, 1,000,000 audit rows, 200,000 events at 10,000); each is served by its own
// process. In the same run, each panel page and list endpoint is timed one request at a time
// (rounds alternate the two sizes, so drift on a shared machine falls on both) and its p50 at
// 10,000 is compared with its p50 at 20: target at most 3x, and panel pages at most 200 KB of
// HTML. API lists ask for pages of 20, full at both sizes, so that the ratio is the team's size
// and not the page's. Then panel pages and API calls are mixed under load (10 connections) and each server
// reports its event loop's delay (perf_hooks.monitorEventLoopDelay): p99 at 10,000 beside 20.
// Last (issue 37), a flood at 10,000, from a server with the default rate limit: one session
// keeps FLOOD_CONNECTIONS requests in flight, each a search that no name holds (`%_`, which
// walked every name of the team), while a member of another team opens its Overview every 50 ms,
// one request at a time; that member's p99 under the flood is compared with its p99 before it.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { seedScale, type ScaleFixture } from './support/scale-seed.js';
import { envNumber } from './support/settings.js';

const SIZES = [20, 10_000] as const;
/** A search no name holds: two characters (so no three-character piece to start from), and LIKE's wildcards. */
const CRAFTED_SEARCH = '%_';
const FLOOD_CONNECTIONS = 40;
const NEIGHBOUR_PACE_MS = 50;
const MAX_RATIO = 3;
const MAX_HTML_BYTES = 200 * 1024;

interface Endpoint {
  name: string;
  panel: boolean;
  /** Its answer must name the fixture's searched service (a search that finds it). */
  findsSearched?: boolean;
  request(f: Side): { path: string; method?: string; headers: Record<string, string>; body?: string };
}
interface Side { size: number; fixture: ScaleFixture; server: ChildServer; nextPage: string; csrf: string }
interface EventLoopDelay { p50Ms: number; p99Ms: number; maxMs: number; meanMs: number }

const cookie = (f: Side) => ({ cookie: `teaminfra_session=${f.fixture.ownerCookie}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json' });
const panelGet = (name: string, path: (f: Side) => string): Endpoint => ({ name, panel: true, request: (f) => ({ path: path(f), headers: cookie(f) }) });
const apiGet = (name: string, path: (f: Side) => string, token: (f: ScaleFixture) => string): Endpoint =>
  ({ name, panel: false, request: (f) => ({ path: path(f), headers: bearer(token(f.fixture)) }) });

const ENDPOINTS: Endpoint[] = [
  panelGet('panel Overview', () => '/panel'),
  panelGet('panel Overview, next page', (f) => f.nextPage),
  { ...panelGet('panel Overview, search by name', (f) => `/panel?q=${encodeURIComponent(f.fixture.searchedName)}`), findsSearched: true },
  panelGet('panel Overview, search no name holds (%_)', () => `/panel?q=${encodeURIComponent(CRAFTED_SEARCH)}`),
  panelGet('panel API Tokens list', () => '/panel/developer/api-tokens'),
  panelGet('panel create-token form', () => '/panel/developer/api-tokens/new'),
  panelGet('panel edit-access form', (f) => `/panel/developer/api-tokens/${f.fixture.editTokenId}/edit`),
  { ...panelGet('panel token form search (JSON)', (f) => `/panel/token-choices/services?q=${encodeURIComponent(f.fixture.searchedName)}`), findsSearched: true },
  panelGet('panel token form search no name holds (JSON, %_)', () => `/panel/token-choices/services?q=${encodeURIComponent(CRAFTED_SEARCH)}`),
  {
    name: 'panel create-token form, sent with "Find"', panel: true, findsSearched: true, request: (f) => ({
      path: '/panel/developer/api-tokens', method: 'POST',
      headers: { ...cookie(f), 'content-type': 'application/x-www-form-urlencoded', origin: f.server.url },
      body: new URLSearchParams({ _csrf: f.csrf, name: 'x', find: 'services', service_search: f.fixture.searchedName, restrict_services: 'on', services: f.fixture.serviceId }).toString(),
    }),
  },
  panelGet('panel Decisions', () => '/panel/decisions'),
  panelGet('panel Members', () => '/panel/members'),
  panelGet('panel Webhooks', () => '/panel/developer/webhooks'),
  panelGet('panel Activity', () => '/panel/activity'),
  apiGet('GET /api/service-erp (full access)', () => '/api/service-erp?limit=20', (f) => f.fullToken),
  apiGet('GET /api/service-erp (limited to 2 services)', () => '/api/service-erp?limit=20', (f) => f.restrictedToken),
  apiGet('GET /api/service-erp/{id}/copies', (f) => `/api/service-erp/${f.fixture.serviceId}/copies`, (f) => f.fullToken),
  apiGet('GET /api/service-erp/{id}/backups', (f) => `/api/service-erp/${f.fixture.serviceId}/backups`, (f) => f.fullToken),
  apiGet('GET /api/servers', () => '/api/servers?limit=20', (f) => f.fullToken),
  apiGet('GET /api/operations (full access)', () => '/api/operations?limit=20', (f) => f.fullToken),
  apiGet('GET /api/operations (limited to 2 services)', () => '/api/operations?limit=20', (f) => f.restrictedToken),
  apiGet('GET /api/operations (own requests only)', () => '/api/operations?limit=20', (f) => f.requesterToken),
  apiGet('GET /api/decisions', () => '/api/decisions?limit=20', (f) => f.fullToken),
  apiGet('GET /api/activity', () => '/api/activity?limit=20', (f) => f.fullToken),
];

async function call(side: Side, endpoint: Endpoint): Promise<{ ms: number; status: number; bytes: number; text: string }> {
  const { path, method, headers, body } = endpoint.request(side);
  const started = performance.now();
  const response = await fetch(side.server.url + path, { method: method ?? 'GET', headers, body, redirect: 'manual' });
  const text = await response.text();
  return { ms: performance.now() - started, status: response.status, bytes: Buffer.byteLength(text), text };
}

const median = (values: number[]) => { const sorted = [...values].sort((a, b) => a - b); return sorted[Math.floor(sorted.length / 2)] ?? NaN; };
const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

interface FloodFigures { quietP50Ms: number; quietP99Ms: number; floodedP50Ms: number; floodedP99Ms: number; floodRequests: number; flood2xx: number; flood429: number }

/**
 * The neighbour's Overview, one request every NEIGHBOUR_PACE_MS (a person's pace, well within
 * its own session's budget) for `seconds`: its latencies in ms.
 */
async function neighbourLatencies(url: string, cookieValue: string, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const begun = performance.now();
  for (let sent = 0; performance.now() - begun < seconds * 1000; sent++) {
    const wait = begun + sent * NEIGHBOUR_PACE_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const started = performance.now();
    const response = await fetch(`${url}/panel`, { headers: { cookie: `teaminfra_session=${cookieValue}` }, redirect: 'manual' });
    await response.text();
    if (response.status !== 200) throw new Error(`the neighbour's Overview answered ${response.status} during the flood`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

const percentile = (values: number[], p: number) => { const sorted = [...values].sort((a, b) => a - b); return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN; };

/** One session floods the server with searches that no name holds while another team's member reads its Overview. */
async function flood(dataDir: string, fixture: ScaleFixture, seconds: number): Promise<FloodFigures> {
  const server = await startChildServer('panel-scale.js', [dataDir, 'default-rate-limit']);
  try {
    await neighbourLatencies(server.url, fixture.neighbourCookie, 1);
    const quiet = await neighbourLatencies(server.url, fixture.neighbourCookie, seconds);
    const statuses = new Map<number, number>();
    const load = autocannon({
      url: server.url, connections: FLOOD_CONNECTIONS, duration: seconds + 1,
      requests: [{ method: 'GET', path: `/panel?q=${encodeURIComponent(CRAFTED_SEARCH)}`, headers: { cookie: `teaminfra_session=${fixture.ownerCookie}` } }],
    });
    load.on('response', (_client: unknown, status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
    const flooded = await neighbourLatencies(server.url, fixture.neighbourCookie, seconds);
    const result = await load;
    return {
      quietP50Ms: percentile(quiet, 50), quietP99Ms: percentile(quiet, 99), floodedP50Ms: percentile(flooded, 50), floodedP99Ms: percentile(flooded, 99),
      floodRequests: result.requests.total, flood2xx: statuses.get(200) ?? 0, flood429: statuses.get(429) ?? 0,
    };
  } finally {
    await server.stop();
  }
}

async function mixedLoad(side: Side, seconds: number): Promise<EventLoopDelay & { requests: number; non2xx: number }> {
  const requests = ENDPOINTS.filter((endpoint) => !endpoint.request(side).method).map((endpoint) => {
    const { path, headers } = endpoint.request(side);
    return { method: 'GET', path, headers };
  });
  await side.server.ask('eld-reset', 'eld-reset');
  const result = await autocannon({ url: side.server.url, connections: 10, duration: seconds, requests });
  const delay = await side.server.ask<EventLoopDelay>('eld', 'eld');
  return { ...delay, requests: result.requests.total, non2xx: result.non2xx };
}

export default async function panelScaleBench() {
  const rounds = Math.round(envNumber('BENCH_ROUNDS', 3));
  const perRound = Math.round(envNumber('BENCH_SCALE_REQUESTS', 30));
  const loadSeconds = envNumber('BENCH_SECONDS', 3) * 2;
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    for (const size of SIZES) {
      const dataDir = mkdtempSync(join(tmpdir(), `teaminfra-scale-${size}-`));
      dirs.push(dataDir);
      const fixture = await seedScale(dataDir, size);
      console.log(`seeded ${size} services: ${JSON.stringify(fixture.counts)} in ${fixed(fixture.seconds, 1)} s`);
      const server = await startChildServer('panel-scale.js', [dataDir]);
      const side: Side = { size, fixture, server, nextPage: '/panel', csrf: '' };
      const overview = await call(side, ENDPOINTS[0]!);
      side.nextPage = (/rel="next" href="([^"]+)"/.exec(overview.text)?.[1] ?? '/panel').replaceAll('&amp;', '&');
      side.csrf = /name="_csrf" value="([^"]+)"/.exec(overview.text)?.[1] ?? '';
      sides.push(side);
    }

    // Every answer is checked before it is timed: a fast error page would prove nothing.
    const problems: string[] = [];
    const bytes = new Map<string, number[]>();
    for (const endpoint of ENDPOINTS) {
      for (const side of sides) {
        const answer = await call(side, endpoint);
        if (answer.status !== 200) problems.push(`${endpoint.name} at ${side.size}: ${answer.status}`);
        if (endpoint.findsSearched && !answer.text.includes(side.fixture.searchedName)) problems.push(`${endpoint.name} at ${side.size}: the searched service is missing`);
        bytes.set(endpoint.name, [...(bytes.get(endpoint.name) ?? []), answer.bytes]);
      }
    }

    const times = new Map<string, number[][]>(ENDPOINTS.map((endpoint) => [endpoint.name, sides.map(() => [])]));
    for (let round = 0; round < rounds; round++) {
      for (const endpoint of ENDPOINTS) {
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          for (let i = 0; i < 3; i++) await call(side, endpoint);
          for (let i = 0; i < perRound; i++) times.get(endpoint.name)![sides.indexOf(side)]!.push((await call(side, endpoint)).ms);
        }
      }
    }

    const rows = ENDPOINTS.map((endpoint) => {
      const [small, large] = times.get(endpoint.name)!.map(median) as [number, number];
      const [smallBytes, largeBytes] = bytes.get(endpoint.name)! as [number, number];
      const ratio = large / small;
      const withinRatio = ratio <= MAX_RATIO;
      const withinSize = !endpoint.panel || largeBytes <= MAX_HTML_BYTES;
      return { name: endpoint.name, p50MsAt20: small, p50MsAt10000: large, ratio, bytesAt20: smallBytes, bytesAt10000: largeBytes, withinRatio, withinSize };
    });
    const delays = [];
    for (const side of sides) delays.push({ size: side.size, ...(await mixedLoad(side, loadSeconds)) });
    // The flood runs on a server of its own over the same data, with the default rate limit.
    const largest = sides.at(-1)!;
    await largest.server.stop();
    const flooded = await flood(dirs.at(-1)!, largest.fixture, loadSeconds);

    console.log(`\none request at a time, ${rounds} round(s) of ${perRound} per size; p50 in ms`);
    console.log(`${'page or endpoint'.padEnd(48)}${'at 20'.padStart(8)}${'at 10k'.padStart(8)}${'ratio'.padStart(7)}${'KB at 20'.padStart(10)}${'KB at 10k'.padStart(10)}`);
    for (const row of rows) {
      console.log(`${row.name.padEnd(48)}${fixed(row.p50MsAt20).padStart(8)}${fixed(row.p50MsAt10000).padStart(8)}${fixed(row.ratio).padStart(7)}` +
        `${fixed(row.bytesAt20 / 1024, 1).padStart(10)}${fixed(row.bytesAt10000 / 1024, 1).padStart(10)}${row.withinRatio && row.withinSize ? '' : '  OVER TARGET'}`);
    }
    console.log(`\nmixed load (panel pages and API lists in turn, 10 connections, ${loadSeconds} s): event loop delay, ms`);
    for (const delay of delays) {
      console.log(`  ${String(delay.size).padStart(6)} services: p50 ${fixed(delay.p50Ms)}  p99 ${fixed(delay.p99Ms)}  max ${fixed(delay.maxMs)}  ` +
        `(${delay.requests} requests, ${delay.non2xx} not 2xx)`);
    }
    console.log(`\nflood at ${largest.size} (default rate limit): one session with ${FLOOD_CONNECTIONS} searches for "${CRAFTED_SEARCH}" in flight, ` +
      `${flooded.floodRequests} requests (${flooded.flood2xx} answered 200, ${flooded.flood429} 429)`);
    console.log(`  another team's Overview, one every ${NEIGHBOUR_PACE_MS} ms: p50 ${fixed(flooded.quietP50Ms)} p99 ${fixed(flooded.quietP99Ms)} ms before, ` +
      `p50 ${fixed(flooded.floodedP50Ms)} p99 ${fixed(flooded.floodedP99Ms)} ms during the flood (p99 ${fixed(flooded.floodedP99Ms / flooded.quietP99Ms)}x)`);
    const met = problems.length === 0 && rows.every((row) => row.withinRatio && row.withinSize) && delays.every((delay) => delay.non2xx === 0);
    console.log(`targets (each at 10,000 within ${MAX_RATIO}x of 20, panel pages <= ${MAX_HTML_BYTES / 1024} KB): ${met ? 'met' : 'NOT met'}`);
    for (const problem of problems) console.log(`problem: ${problem}`);
    const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    return {
      seeded: Object.fromEntries(sides.map((side) => [side.size, side.fixture.counts])),
      rows, eventLoop: delays, flood: flooded, problems,
      ratios: {
        worstRatio: worst.ratio, eventLoopP99At20: delays[0]!.p99Ms, eventLoopP99At10000: delays[1]!.p99Ms,
        neighbourP99UnderFlood: flooded.floodedP99Ms / flooded.quietP99Ms,
      },
      target: { maxRatio: MAX_RATIO, maxHtmlBytes: MAX_HTML_BYTES, met },
    };
  } finally {
    await Promise.allSettled(sides.map((side) => side.server.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
