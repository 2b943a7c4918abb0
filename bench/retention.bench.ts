// Row retention under a steady load: 30 days of a busy team (operations with their transitions,
// polls that each leave an audit entry, webhook deliveries with their events), written day by day
// with a simulated clock, the pruning pass run at the end of each day as a node runs it. Measured
// in the same run: the database's size (pages in use) and the latency of two list endpoints
// (GET /api/operations, GET /api/service-erp) at day 1 and day 30. The day-1 database is kept as
// a copy, and both are measured at the end in alternating rounds, so that drift on a shared
// machine falls on both alike.
// Retention here is an operator's short setting (audit 7 days, webhooks 3, operations 7), so that
// 30 days reach the steady state the defaults (400/30/90) reach later at the same rates.
// Targets: every table holds no more than the retention allows (days kept × rows a day), and
// each list at day 30 answers within 1.2× its day-1 latency.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, defaultConfig, type App } from '../src/app.js';
import { DATABASE_FILE } from '../src/db/connect.js';
import { newId } from '../src/db/ids.js';
import { insertServer } from '../src/db/repositories/servers.js';
import { insertService } from '../src/db/repositories/services.js';
import { insertTeam } from '../src/db/repositories/teams.js';
import { createToken } from '../src/db/repositories/tokens.js';
import { pruneRows } from '../src/engine/row-retention/prune-rows.js';
import { buildHttpServer } from '../src/http/server.js';
import { catalog } from '../tools/index.js';

const DAY = 86_400_000;
const DAYS = 30;
const SERVICES = 20;
/** A busy team's day: a poll every ~30 s around the clock from a few assistants, 300 operations, 600 deliveries. */
const PER_DAY = { audit: 3_000, operations: 300, deliveries: 600 };
const RETENTION = { audit: 7, webhooks: 3, operations: 7 };
const LATENCY_RATIO_TARGET = 1.2;
const SAMPLES = 200;
const ROUNDS = 5;

export default async function retentionBench() {
  const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-bench-retention-'));
  const app = createApp({ ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000, windowSeconds: 60 } });
  await app.db.ready();
  const server = await buildHttpServer(app, catalog);
  try {
    const db = app.db.kysely;
    const teamId = await insertTeam(db, { name: 'Busy', plan: 'business', timezone: 'UTC' });
    const serverId = await insertServer(db, { teamId, name: 'eu-1' });
    const services: string[] = [];
    for (let i = 0; i < SERVICES; i++) services.push(await insertService(db, { teamId, serverId, name: `ERP ${i}` }));
    const token = await createToken(db, {
      teamId, name: 'bench', source: 'panel', acceptedBy: 'both', fullAccess: true, permissions: [], serviceIds: null, serverIds: null,
      expiresOn: null, createdByUserId: null,
    });
    const webhookId = newId('wh');
    await db.insertInto('webhooks').values({
      id: webhookId, team_id: teamId, url: 'https://hooks.example.com/', description: '', event_types: '*', secret: 'sealed',
      allow_private: 0, enabled: 1, created_at: new Date(0).toISOString(),
    }).execute();
    const headers = { authorization: `Bearer ${token.value}`, accept: 'application/json' };
    const start = Date.parse('2025-01-01T00:00:00Z');

    const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
    const sample = async (on: Awaited<ReturnType<typeof buildHttpServer>>, url: string, times: number[]) => {
      for (let i = 0; i < 20; i++) await on.inject({ method: 'GET', url, headers });
      for (let i = 0; i < SAMPLES; i++) {
        const began = performance.now();
        const response = await on.inject({ method: 'GET', url, headers });
        times.push(performance.now() - began);
        if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
      }
    };
    const sizeOf = (of: App = app) => {
      const pragma = (name: string) => Number(of.db.sqlite!.pragma(name, { simple: true }));
      return (pragma('page_count') - pragma('freelist_count')) * pragma('page_size');
    };
    const rowsOf = async () => {
      const count = async (table: 'audit_log' | 'operations' | 'operation_transitions' | 'events' | 'webhook_deliveries') =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      return {
        audit_log: await count('audit_log'), operations: await count('operations'), operation_transitions: await count('operation_transitions'),
        events: await count('events'), webhook_deliveries: await count('webhook_deliveries'),
      };
    };

    const measured: Record<string, { sizeBytes: number; operationsMs: number; servicesMs: number; rows: Awaited<ReturnType<typeof rowsOf>>; pruneMs: number }> = {};
    const dayOneDir = join(dataDir, 'day1');
    const loadStarted = performance.now();
    for (let day = 0; day < DAYS; day++) {
      await writeDay(app.db.kysely, { teamId, serverId, services, webhookId, tokenId: token.id, at: start + day * DAY });
      const pruneStarted = performance.now();
      await pruneRows(app.db, { owner: 'bench', now: start + (day + 1) * DAY, fallback: RETENTION });
      const pruneMs = performance.now() - pruneStarted;
      if (day === 0 || day === DAYS - 1) measured[`day${day + 1}`] = { sizeBytes: sizeOf(), operationsMs: 0, servicesMs: 0, rows: await rowsOf(), pruneMs };
      if (day === 0) {
        app.db.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
        mkdirSync(dayOneDir);
        copyFileSync(join(dataDir, DATABASE_FILE), join(dayOneDir, DATABASE_FILE));
      }
    }
    // Both databases, in alternating rounds (the requests' own audit entries are written at the real time, kept by both alike).
    const dayOne = createApp({ ...defaultConfig(dayOneDir), rateLimit: { limit: 1_000_000, windowSeconds: 60 } });
    await dayOne.db.ready();
    const dayOneServer = await buildHttpServer(dayOne, catalog);
    const times: Record<string, { operations: number[]; services: number[] }> = {
      day1: { operations: [], services: [] }, [`day${DAYS}`]: { operations: [], services: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [label, on] of [['day1', dayOneServer], [`day${DAYS}`, server]] as const) {
        await sample(on, '/api/operations?limit=50', times[label]!.operations);
        await sample(on, '/api/service-erp?limit=50', times[label]!.services);
      }
    }
    for (const label of Object.keys(times)) {
      measured[label]!.operationsMs = median(times[label]!.operations);
      measured[label]!.servicesMs = median(times[label]!.services);
    }
    await dayOneServer.close();
    await dayOne.close();
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    // Bytes each kept row costs, indexes included (SQLite's dbstat): what the docs' disk figures are computed from.
    const bytesPerRow = bytesPerRowOf(app, await rowsOf());
    console.log(`bytes per row, indexes included: ${JSON.stringify(bytesPerRow)}`);
    const first = measured.day1!;
    const last = measured[`day${DAYS}`]!;
    // What the settings allow: the days each kind is kept (the day being written included), at the load's rates.
    const allowed = {
      audit_log: (RETENTION.audit + 1) * PER_DAY.audit,
      operations: (RETENTION.operations + 1) * PER_DAY.operations + SERVICES,
      operation_transitions: ((RETENTION.operations + 1) * PER_DAY.operations + SERVICES) * 3,
      events: (RETENTION.webhooks + 1) * PER_DAY.deliveries,
      webhook_deliveries: (RETENTION.webhooks + 1) * PER_DAY.deliveries,
    };
    const withinRetention = Object.entries(allowed).every(([table, limit]) =>
      last.rows[table as keyof typeof allowed] <= limit);
    const ratios = {
      operationsDay30OverDay1: last.operationsMs / first.operationsMs,
      servicesDay30OverDay1: last.servicesMs / first.servicesMs,
      sizeDay30OverDay1: last.sizeBytes / first.sizeBytes,
    };
    const latencyMet = ratios.operationsDay30OverDay1 <= LATENCY_RATIO_TARGET && ratios.servicesDay30OverDay1 <= LATENCY_RATIO_TARGET;
    console.log(`${DAYS} days of ${JSON.stringify(PER_DAY)} a day written and pruned in ${loadSeconds.toFixed(1)} s (retention ${JSON.stringify(RETENTION)} days)`);
    for (const [label, figures] of Object.entries(measured)) {
      console.log(`${label}: ${(figures.sizeBytes / 1_048_576).toFixed(1)} MiB in use; GET /api/operations ${figures.operationsMs.toFixed(2)} ms, ` +
        `GET /api/service-erp ${figures.servicesMs.toFixed(2)} ms (medians of ${SAMPLES * ROUNDS}, rounds alternating); pruning pass ${figures.pruneMs.toFixed(0)} ms; rows ${JSON.stringify(figures.rows)}`);
    }
    console.log(`allowed by retention: ${JSON.stringify(allowed)} -> ${withinRetention ? 'within' : 'EXCEEDED'}`);
    console.log(`latency day 30 / day 1: operations ${ratios.operationsDay30OverDay1.toFixed(2)}, services ${ratios.servicesDay30OverDay1.toFixed(2)} (target <= ${LATENCY_RATIO_TARGET})`);
    return { measured, allowed, bytesPerRow, ratios, target: { met: withinRetention && latencyMet, withinRetention, latencyRatio: LATENCY_RATIO_TARGET } };
  } finally {
    await server.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function bytesPerRowOf(app: App, rows: Record<string, number>): Record<string, number> {
  const tables: Record<string, string[]> = {
    audit_log: ['audit_log', 'audit_log_team', 'audit_log_at', 'sqlite_autoindex_audit_log_1'],
    operations: ['operations', 'operations_team', 'operations_requester', 'operations_team_service', 'operations_queue', 'operations_idempotency', 'operations_finished', 'sqlite_autoindex_operations_1'],
    operation_transitions: ['operation_transitions', 'operation_transitions_operation', 'sqlite_autoindex_operation_transitions_1'],
    events: ['events', 'events_undispatched', 'events_team', 'sqlite_autoindex_events_1'],
    webhook_deliveries: ['webhook_deliveries', 'webhook_deliveries_due', 'webhook_deliveries_webhook', 'webhook_deliveries_ended', 'webhook_deliveries_event', 'sqlite_autoindex_webhook_deliveries_1'],
  };
  const used = new Map((app.db.sqlite!.prepare('select name, sum(pgsize - unused) as bytes from dbstat group by name').all() as { name: string; bytes: number }[])
    .map((row) => [row.name, row.bytes]));
  return Object.fromEntries(Object.entries(tables).map(([table, names]) =>
    [table, Math.round(names.reduce((sum, name) => sum + (used.get(name) ?? 0), 0) / Math.max(1, rows[table] ?? 1))]));
}

/** One simulated day of the load, in a few large transactions. */
async function writeDay(
  db: ReturnType<typeof createApp>['db']['kysely'],
  day: { teamId: string; serverId: string; services: string[]; webhookId: string; tokenId: string; at: number },
): Promise<void> {
  const iso = (offset: number) => new Date(day.at + offset).toISOString();
  const spread = (i: number, count: number) => Math.floor((i * DAY) / count);
  await db.transaction().execute(async (trx) => {
    for (let from = 0; from < PER_DAY.audit; from += 500) {
      await trx.insertInto('audit_log').values(Array.from({ length: Math.min(500, PER_DAY.audit - from) }, (_, k) => ({
        id: newId('aud'), team_id: day.teamId, at: iso(spread(from + k, PER_DAY.audit)), actor_type: 'token' as const, actor_id: day.tokenId,
        channel: 'mcp', action: 'list_operations', target_type: null, target_id: null, outcome: 'allowed' as const, code: null, detail: null,
      }))).execute();
    }
    for (let i = 0; i < PER_DAY.operations; i++) {
      const id = newId('op');
      const at = iso(spread(i, PER_DAY.operations));
      await trx.insertInto('operations').values({
        id, team_id: day.teamId, kind: 'start', service_id: day.services[i % day.services.length] as string, server_id: day.serverId,
        state: 'succeeded', reason: null, parameters: '{}', result: null, requested_by_token_id: day.tokenId, requested_channel: 'mcp',
        idempotency_key: null, request_fingerprint: null, lease_owner: null, lease_expires_at: null, created_at: at, started_at: at,
        finished_at: at, decision_id: null,
      }).execute();
      await trx.insertInto('operation_transitions').values(['queued', 'running', 'succeeded'].map((state) => ({
        id: newId('opt'), operation_id: id, state, reason: null, at, token_id: day.tokenId, channel: 'mcp',
      }))).execute();
    }
    for (let i = 0; i < PER_DAY.deliveries; i++) {
      const eventId = newId('evt');
      const at = iso(spread(i, PER_DAY.deliveries));
      await trx.insertInto('events').values({ id: eventId, team_id: day.teamId, type: 'operation.succeeded', payload: '{"data":{}}', created_at: at, dispatched_at: at }).execute();
      await trx.insertInto('webhook_deliveries').values({
        id: newId('dlv'), webhook_id: day.webhookId, event_id: eventId, state: 'delivered', attempts: 1, next_attempt_at: at,
        last_status: 200, last_duration_ms: 40, created_at: at, updated_at: at,
      }).execute();
    }
  });
}
