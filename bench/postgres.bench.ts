// GET /api/service-erp (200 ERP services, a token restricted to 20 of them, the same seed as
// list-services.bench.ts) on PostgreSQL against SQLite in the same run, one node each; then two
// nodes against one, both on the same PostgreSQL, the load split between them (same total
// number of connections). Each server is `teaminfra`'s HTTP server in its own process. Needs a
// PostgreSQL database it may create a schema in: TEAMINFRA_BENCH_DATABASE_URL, or
// TEAMINFRA_TEST_DATABASE_URL; skipped with a line saying so otherwise. No target yet: this
// measures, and the report explains. Target (issue 17): PostgreSQL one node >= 0.6 of SQLite.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { pool, sample, type LoadFigures, type Sample, type Target } from './support/load.js';
import { seedListServices } from './support/seed.js';
import { loadSettings } from './support/settings.js';
import { DEFAULT_POOL_SIZE } from '../src/db/dialect-postgres.js';

const PATH = '/api/service-erp?limit=50';

// The default pool (DEFAULT_POOL_SIZE) is measured as `postgres`; these sizes beside it.
const OTHER_POOL_SIZES = [2, 4, 20] as const;
type Key = 'sqlite' | 'postgres' | 'postgresTwoNodes' | `postgresPool${(typeof OTHER_POOL_SIZES)[number]}`;
interface Contender { key: Key; label: string; servers: ChildServer[]; headers: Record<string, string>; samples: Sample[] }

const fixed = (value: number | undefined, digits = 2) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export default async function postgresBench() {
  const baseUrl = process.env.TEAMINFRA_BENCH_DATABASE_URL || process.env.TEAMINFRA_TEST_DATABASE_URL;
  if (!baseUrl) {
    console.log('postgres: SKIPPED, no PostgreSQL: set TEAMINFRA_BENCH_DATABASE_URL (or TEAMINFRA_TEST_DATABASE_URL) to a database ' +
      'this benchmark may create a schema in (bash .ci/run shows how to start the machine\'s PostgreSQL 15).');
    return { skipped: 'no PostgreSQL database given' };
  }
  const config = loadSettings();
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const directories = [0, 1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'teaminfra-bench-')));
  const [sqliteDir, seedDir, nodeOneDir, nodeTwoDir] = directories as [string, string, string, string];
  const contenders: Contender[] = [];
  await admin(baseUrl, `CREATE SCHEMA ${schema}`);
  try {
    const serverUrl = withOptions(baseUrl, `-c search_path=${schema}`);
    const started = performance.now();
    const sqliteSeed = await seedListServices(sqliteDir);
    // Seeding only: commits need not wait for the disk.
    const postgresSeed = await seedListServices(seedDir, withOptions(baseUrl, `-c search_path=${schema} -c synchronous_commit=off`));
    console.log(`seeded ${JSON.stringify(sqliteSeed.counts)} into SQLite and into PostgreSQL (schema ${schema}) in ${Math.round(performance.now() - started)} ms`);

    const headersOf = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json' });
    const add = async (key: Key, label: string, servers: Promise<ChildServer>[], token: string) => {
      contenders.push({ key, label, servers: await Promise.all(servers), headers: headersOf(token), samples: [] });
    };
    await add('sqlite', 'SQLite, one node', [startChildServer('ours.js', [sqliteDir, 'off'])], sqliteSeed.token);
    await add('postgres', `PostgreSQL, one node (pool ${DEFAULT_POOL_SIZE})`, [startChildServer('ours.js', [nodeOneDir, 'off', serverUrl])], postgresSeed.token);
    for (const size of OTHER_POOL_SIZES) {
      await add(`postgresPool${size}`, `PostgreSQL, pool of ${size}`, [startChildServer('ours.js', [nodeOneDir, 'off', serverUrl, String(size)])], postgresSeed.token);
    }
    await add('postgresTwoNodes', 'PostgreSQL, two nodes', [
      startChildServer('ours.js', [nodeOneDir, 'off', serverUrl]), startChildServer('ours.js', [nodeTwoDir, 'off', serverUrl]),
    ], postgresSeed.token);

    // Every server answers the same page: the 20 services the token reaches.
    const expected = [...postgresSeed.restrictedServiceIds].sort().join();
    const expectedSqlite = [...sqliteSeed.restrictedServiceIds].sort().join();
    for (const contender of contenders) {
      for (const server of contender.servers) {
        const response = await fetch(server.url + PATH, { headers: contender.headers });
        const body = (await response.json()) as { data?: { id: string }[] };
        const ids = body.data?.map((row) => row.id).join();
        if (response.status !== 200 || ids !== (contender.key === 'sqlite' ? expectedSqlite : expected)) {
          throw new Error(`${contender.label} answered ${response.status} with ${body.data?.length} rows; expected the 20 restricted services`);
        }
      }
    }

    for (const contender of contenders) await measureOnce(contender, config.connections, config.warmupSeconds, false);
    for (let round = 0; round < config.rounds; round++) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
      for (const contender of order) contender.samples.push(await measureOnce(contender, config.connections, config.seconds, true));
    }

    const figures = Object.fromEntries(contenders.map((c) => [c.key, { label: c.label, ...pool(c.samples) }])) as
      Record<Key, LoadFigures & { label: string }>;
    const ratios = {
      postgresOverSqlite: figures.postgres.requestsPerSecond / figures.sqlite.requestsPerSecond,
      twoNodesOverOne: figures.postgresTwoNodes.requestsPerSecond / figures.postgres.requestsPerSecond,
      /** CPU of the teaminfra processes per request (PostgreSQL's own CPU is not counted). */
      cpuPostgresOverSqlite: figures.postgres.serverCpuMicrosPerRequest / figures.sqlite.serverCpuMicrosPerRequest,
      ...Object.fromEntries(OTHER_POOL_SIZES.map((size) =>
        [`pool${size}OverPool${DEFAULT_POOL_SIZE}`, figures[`postgresPool${size}`].requestsPerSecond / figures.postgres.requestsPerSecond])),
    };
    console.log(`\nGET ${PATH}: 200 services, token restricted to 20; ${config.connections} connections in all; ` +
      `${config.warmupSeconds} s warm-up, then ${config.rounds} round(s) of ${config.seconds} s each`);
    console.log(`${'server'.padEnd(32)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'CPU us/req'.padStart(12)}  req/s per round`);
    for (const c of contenders) {
      const f = figures[c.key];
      console.log(`${c.label.padEnd(32)}${fixed(f.requestsPerSecond, 0).padStart(9)}${fixed(f.p50Ms).padStart(9)}${fixed(f.p99Ms).padStart(9)}` +
        `${fixed(f.serverCpuMicrosPerRequest, 0).padStart(12)}  ${f.perSample.join(', ')}`);
    }
    console.log(`PostgreSQL/SQLite = ${fixed(ratios.postgresOverSqlite)}   two nodes/one = ${fixed(ratios.twoNodesOverOne)}   ` +
      `teaminfra CPU per request, PostgreSQL/SQLite = ${fixed(ratios.cpuPostgresOverSqlite)}`);
    for (const [key, value] of Object.entries(ratios)) if (key.startsWith('pool')) console.log(`${key} = ${fixed(value)}`);
    console.log('Why: SQLite answers in-process from prepared statements; PostgreSQL costs two round trips per request (token, ' +
      'then the list; both named prepared statements) through pg, and its server shares these cores with the load and the nodes. A second node ' +
      'adds an event loop but no core here, so it shows what the database and the cores allow, not what two machines would do.');
    const problems = contenders.filter((c) => figures[c.key].non2xx > 0 || figures[c.key].errors > 0)
      .map((c) => `${c.label}: ${figures[c.key].non2xx} non-2xx, ${figures[c.key].errors} errors`);
    for (const line of problems) console.log(line);
    return { path: PATH, settings: config, seeded: sqliteSeed.counts, servers: figures, ratios, problems };
  } finally {
    await Promise.allSettled(contenders.flatMap((c) => c.servers.map((server) => server.stop())));
    await admin(baseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((error: Error) => console.error(`postgres: could not drop ${schema}: ${error.message}`));
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  }
}

/** One sample of a contender: with two servers, both loaded at once with half the connections each. */
async function measureOnce(contender: Contender, connections: number, seconds: number, keep: boolean): Promise<Sample> {
  const share = Math.max(1, Math.round(connections / contender.servers.length));
  const samples = await Promise.all(contender.servers.map((server) => {
    const target: Target = { url: server.url + PATH, headers: contender.headers, connections: share };
    return sample(target, seconds, keep, server.cpuMicros);
  }));
  const latencies = new Float64Array(samples.reduce((total, s) => total + s.latencies.length, 0));
  let offset = 0;
  for (const s of samples) { latencies.set(s.latencies, offset); offset += s.latencies.length; }
  return {
    ok: samples.reduce((total, s) => total + s.ok, 0),
    seconds: Math.max(...samples.map((s) => s.seconds)),
    latencies,
    non2xx: samples.reduce((total, s) => total + s.non2xx, 0),
    errors: samples.reduce((total, s) => total + s.errors, 0),
    ...(samples.every((s) => s.serverCpuMicros !== undefined)
      ? { serverCpuMicros: samples.reduce((total, s) => total + s.serverCpuMicros!, 0) } : {}),
  };
}

function withOptions(url: string, options: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', options);
  return parsed.toString();
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
