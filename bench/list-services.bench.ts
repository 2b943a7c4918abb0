// GET /api/service-erp for a team with 200 ERP services and a token restricted to 20 of them,
// under autocannon, against teaminfra and two bare node:http baselines in the same run:
//   (a) returns the exact bytes teaminfra returned: the cost of HTTP alone;
//   (b) does only the token-hash lookup and the list query teaminfra had before issue 17 (which
//       walked the team's services), with prepared statements;
//   (c) the best hand-written endpoint: the token lookup and the fastest correct reach-filtered
//       query (by key), prepared, for the same answer (servers/hand-written.ts).
// "ours" is buildHttpServer as is (no logger); "ours + request log" is the same server with the
// logger `teaminfra serve` configures (level info, to /dev/null here). Each server runs in its own
// process and is loaded alone; the rounds alternate between them so that drift on a shared
// machine spreads over all of them. Targets: ours >= 0.9 of (b) and >= 0.8 of (c).
// Then, in process, the list query alone: ours (listReachableServices) against (c)'s statement.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { pool, sample, type LoadFigures, type Sample, type Target } from './support/load.js';
import { seedListServices } from './support/seed.js';
import { timeListQuery } from './support/list-query-timing.js';
import { loadSettings } from './support/settings.js';

const PATH = '/api/service-erp?limit=50';
const TARGET_B = 0.9;
const TARGET_C = 0.8;



/** Headers worth replaying byte for byte; the rest are per-connection or recomputed. */
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

async function capture(url: string, headers: Record<string, string>) {
  const response = await fetch(url + PATH, { headers });
  const body = Buffer.from(await response.arrayBuffer());
  const replayed: Record<string, string> = {};
  response.headers.forEach((value, name) => { if (!NOT_REPLAYED.has(name)) replayed[name] = value; });
  return { status: response.status, headers: replayed, body };
}

const fixed = (value: number | undefined, digits = 2) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

interface Contender { key: 'ours' | 'oursLogged' | 'a' | 'b' | 'c'; label: string; server: ChildServer; samples: Sample[] }

export default async function listServicesBench() {
  const config = loadSettings();
  const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-bench-'));
  const contenders: Contender[] = [];
  try {
    const seedStarted = performance.now();
    const fixture = await seedListServices(dataDir);
    console.log(`seeded ${JSON.stringify(fixture.counts)} in ${Math.round(performance.now() - seedStarted)} ms`);
    const headers = { authorization: `Bearer ${fixture.token}`, accept: 'application/json' };
    const checks: string[] = [];
    const add = async (key: Contender['key'], label: string, start: Promise<ChildServer>) => {
      const contender = { key, label, server: await start, samples: [] };
      contenders.push(contender);
      return contender;
    };

    // Ours first: its answer is what (a) replays and what the others must match.
    const ours = await add('ours', 'ours: teaminfra (Fastify)', startChildServer('ours.js', [dataDir, 'off']));
    const reference = await capture(ours.server.url, headers);
    const page = JSON.parse(reference.body.toString('utf8')) as { data?: { id: string }[]; next_cursor?: string | null };
    const expected = [...fixture.restrictedServiceIds].sort().join();
    if (reference.status !== 200 || page.data?.map((row) => row.id).join() !== expected || page.next_cursor !== null) {
      throw new Error(`teaminfra answered ${reference.status} with ${page.data?.length} rows; expected 200 with the 20 restricted services`);
    }
    const responseFile = join(dataDir, 'ours-response.json');
    writeFileSync(responseFile, JSON.stringify({ status: reference.status, headers: reference.headers, bodyBase64: reference.body.toString('base64') }));

    const logged = await add('oursLogged', 'ours + request log (as `serve`)', startChildServer('ours.js', [dataDir, 'info']));
    const a = await add('a', '(a) node:http, same bytes', startChildServer('same-bytes.js', [responseFile]));
    const b = await add('b', '(b) node:http + lookup + list query', startChildServer('bare-sqlite.js', [dataDir]));
    const c = await add('c', '(c) hand-written: lookup + query by key', startChildServer('hand-written.js', [dataDir]));
    for (const contender of [logged, a, b, c]) {
      const captured = await capture(contender.server.url, headers);
      if (captured.status !== 200) throw new Error(`${contender.label} answered ${captured.status}`);
      if (!captured.body.equals(reference.body)) {
        if (contender.key !== 'b' && contender.key !== 'c') throw new Error(`${contender.label} does not return the same bytes as ours`);
        checks.push(`${contender.label}: body DIFFERS from ours`);
      }
    }
    if (checks.length === 0) checks.push('all five answer 200 with byte-identical bodies (the 20 restricted services)');

    const target = (contender: Contender): Target => ({ url: contender.server.url + PATH, headers, connections: config.connections });
    for (const contender of contenders) await sample(target(contender), config.warmupSeconds, false);
    for (let round = 0; round < config.rounds; round++) {
      // Rotate the order each round so no contender always runs first or last.
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
      for (const contender of order) {
        contender.samples.push(await sample(target(contender), config.seconds, true, contender.server.cpuMicros));
      }
    }

    const figures = Object.fromEntries(contenders.map((c) => [c.key, { label: c.label, ...pool(c.samples) }])) as
      Record<Contender['key'], LoadFigures & { label: string }>;
    const ratio = (x: LoadFigures, y: LoadFigures) => x.requestsPerSecond / y.requestsPerSecond;
    const ratios = {
      oursOverA: ratio(figures.ours, figures.a),
      oursOverB: ratio(figures.ours, figures.b),
      oursOverC: ratio(figures.ours, figures.c),
      oursLoggedOverA: ratio(figures.oursLogged, figures.a),
      oursLoggedOverB: ratio(figures.oursLogged, figures.b),
      /** CPU-time view, steadier on a busy machine: (b)'s server CPU per request over ours. */
      cpuOursOverB: figures.b.serverCpuMicrosPerRequest / figures.ours.serverCpuMicrosPerRequest,
      cpuOursLoggedOverB: figures.b.serverCpuMicrosPerRequest / figures.oursLogged.serverCpuMicrosPerRequest,
      cpuOursOverC: figures.c.serverCpuMicrosPerRequest / figures.ours.serverCpuMicrosPerRequest,
    };
    const query = await timeListQuery(dataDir, fixture);
    const perRound = figures.ours.perSample.map((value, i) => value / figures.b.perSample[i]!);
    const problems = contenders.map((c) => [c.label, figures[c.key]] as const).filter(([, f]) => f.non2xx > 0 || f.errors > 0)
      .map(([label, f]) => `${label}: ${f.non2xx} non-2xx, ${f.errors} errors`);

    console.log(`\nGET ${PATH}: 200 services, token restricted to 20; ${config.connections} connections; ` +
      `${config.warmupSeconds} s warm-up, then ${config.rounds} round(s) of ${config.seconds} s per server`);
    console.log(`${'server'.padEnd(38)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'CPU us/req'.padStart(12)}  req/s per round`);
    for (const c of contenders) {
      const f = figures[c.key];
      console.log(`${c.label.padEnd(38)}${fixed(f.requestsPerSecond, 0).padStart(9)}${fixed(f.p50Ms).padStart(9)}${fixed(f.p99Ms).padStart(9)}` +
        `${fixed(f.serverCpuMicrosPerRequest, 0).padStart(12)}  ${f.perSample.join(', ')}`);
    }
    const met = ratios.oursOverB >= TARGET_B && ratios.oursOverC >= TARGET_C;
    console.log(`ours/(a) = ${fixed(ratios.oursOverA)}   ours/(b) = ${fixed(ratios.oursOverB)} (per round ${perRound.map((r) => fixed(r)).join(', ')})   ` +
      `ours/(c) = ${fixed(ratios.oursOverC)}   targets ours/(b) >= ${TARGET_B}, ours/(c) >= ${TARGET_C}: ${met ? 'met' : 'NOT met'}`);
    console.log(`with the request log: ours/(a) = ${fixed(ratios.oursLoggedOverA)}   ours/(b) = ${fixed(ratios.oursLoggedOverB)}`);
    console.log(`list query alone (20 rows, in process): ours ${fixed(query.oursMicros, 1)} us, (c) ${fixed(query.handWrittenMicros, 1)} us, ` +
      `(c)/ours = ${fixed(query.handWrittenOverOurs)}`);
    console.log(`server CPU per request, (b)/ours: ${fixed(ratios.cpuOursOverB)}, (c)/ours: ${fixed(ratios.cpuOursOverC)} (with the request log, (b)/ours ${fixed(ratios.cpuOursLoggedOverB)}); ` +
      'this is the req/s ratio the servers would show with a core each, and it varies less than req/s on a busy machine');
    for (const line of [...checks, ...problems]) console.log(line);

    return {
      path: PATH,
      settings: config,
      seeded: fixture.counts,
      bodyBytes: reference.body.length,
      servers: figures,
      ratios: { ...ratios, queryHandWrittenOverOurs: query.handWrittenOverOurs },
      query,
      oursOverBPerRound: perRound,
      target: { oursOverB: TARGET_B, oursOverC: TARGET_C, met },
      checks,
      problems,
    };
  } finally {
    await Promise.allSettled(contenders.map((c) => c.server.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
