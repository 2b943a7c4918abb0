// Issue 24: list_activity on a team with 1,000,000 audit rows, a page of 50 filtered by one token
// (one row in twenty is that token's, among twenty tokens), against a hand-written query in the
// same run: the same 51 rows through the same index (audit_log_actor), by a statement prepared
// once on its own better-sqlite3 handle. Ours is the tool's own handler (tools/activity), so the
// query as the repository builds it and each row's view. The rounds alternate the two sides and
// each figure is the median of its rounds. Target: hand-written time over ours at least 0.8.
// The whole call through invoke() (token check, validation, last-used) is reported beside it.
import SQLite from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, defaultConfig } from '../src/app.js';
import { invoke } from '../src/core/invoke.js';
import type { CapabilityContext } from '../src/core/capability.js';
import { DATABASE_FILE } from '../src/db/connect.js';
import { newId } from '../src/db/ids.js';
import { insertTeam } from '../src/db/repositories/teams.js';
import { createToken } from '../src/db/repositories/tokens.js';
import { authenticate } from '../src/core/authenticate.js';
import { callerAccess } from '../src/core/invoke.js';
import listActivity from '../tools/activity/list-activity.js';
import { envNumber } from './support/settings.js';

const ROWS = envNumber('ACTIVITY_BENCH_ROWS', 1_000_000);
const ROUNDS = 7;
const CALLS_PER_ROUND = envNumber('ACTIVITY_BENCH_CALLS', 400);
const TARGET = 0.8;

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

async function microsPerCall(call: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < CALLS_PER_ROUND; i++) await call();
  return ((performance.now() - started) * 1000) / CALLS_PER_ROUND;
}

export default async function activityBench() {
  const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-bench-activity-'));
  const app = createApp({ ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000_000, windowSeconds: 60 } });
  let handle: SQLite.Database | undefined;
  try {
    await app.db.ready();
    const db = app.db.kysely;
    const sqlite = app.db.sqlite!;
    const teamId = await insertTeam(db, { name: 'Busy team', plan: 'business', timezone: 'UTC' });
    const tokens: { id: string; value: string }[] = [];
    for (let i = 0; i < 20; i++) {
      tokens.push(await createToken(db, {
        teamId, name: `assistant ${i + 1}`, source: 'assistant', acceptedBy: 'both', fullAccess: true, permissions: [],
        serviceIds: null, serverIds: null, expiresOn: null, createdByUserId: null,
      }));
    }
    const watched = tokens[7]!;
    const serviceIds = Array.from({ length: 100 }, () => newId('svc'));
    const seeding = performance.now();
    // Ids as newId() makes them, one a millisecond back from now, so that they sort in time.
    const start = Date.now() - ROWS;
    sqlite.transaction(() => {
      const row = sqlite.prepare(`INSERT INTO audit_log (id, team_id, at, actor_type, actor_id, channel, action, target_type, target_id, outcome, code)
        VALUES (?, ?, ?, 'token', ?, ?, ?, 'service', ?, ?, ?)`);
      const actions = ['start_erp_service', 'stop_erp_service', 'create_backup', 'redeploy_erp_service'];
      for (let i = 0; i < ROWS; i++) {
        const ms = start + i;
        const denied = i % 50 === 0;
        row.run(`aud_${ms.toString(36).padStart(9, '0')}0${String(i).padStart(10, '0')}`, teamId, new Date(ms).toISOString(), tokens[i % 20]!.id,
          i % 2 ? 'api' : 'mcp', actions[i % 4], serviceIds[i % 100], denied ? 'denied' : 'allowed', denied ? 'missing_permission' : null);
      }
    })();
    // No ANALYZE: `serve` never runs it, so the plan measured is the one a team gets.
    const seedSeconds = (performance.now() - seeding) / 1000;

    const principal = await authenticate(db, watched.value);
    const context: CapabilityContext = {
      db: app.db, reach: principal.reach, actor: { tokenId: principal.tokenId, channel: 'api' }, caller: callerAccess(principal),
      target: undefined, idempotencyKey: undefined, publicUrl: undefined, approvals: app.approvals,
    };
    const input = listActivity.input.parse({ token_id: watched.id, limit: 50 });
    const ours = () => listActivity.run(input, context);
    const whole = () => invoke(listActivity, { token_id: watched.id, limit: 50 }, { bearer: watched.value, channel: 'api' }, app);

    handle = new SQLite(join(dataDir, DATABASE_FILE), { readonly: true });
    // `+?` as our dialect writes it: a value the planner does not read (src/db/dialect-sqlite.ts).
    const statement = handle.prepare(`
      SELECT a.id, a.at, a.actor_type, a.actor_id, a.channel, a.action, a.target_type, a.target_id, a.outcome, a.code,
        t.name AS token_name, t.source AS token_source, NULL AS user_email
      FROM audit_log a INDEXED BY audit_log_actor LEFT JOIN api_tokens t ON t.id = a.actor_id
      WHERE a.team_id = +? AND a.actor_id = +? ORDER BY a.id DESC LIMIT 51`);
    const handWritten = () => statement.all(teamId, watched.id) as { id: string }[];

    const oursPage = await ours();
    const handRows = handWritten();
    if (oursPage.data.length !== 50 || JSON.stringify(oursPage.data.map((entry) => entry.id)) !== JSON.stringify(handRows.slice(0, 50).map((row) => row.id))) {
      throw new Error('list_activity does not answer the rows the hand-written query reads');
    }
    if ((await whole()).data.length !== 50) throw new Error('list_activity through invoke() did not answer a full page');

    await microsPerCall(ours);
    await microsPerCall(handWritten);
    await microsPerCall(whole);
    const oursRounds: number[] = [];
    const handRounds: number[] = [];
    const wholeRounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides: [number[], () => unknown][] = [[oursRounds, ours], [handRounds, handWritten], [wholeRounds, whole]];
      if (round % 2 === 1) sides.reverse();
      for (const [rounds, call] of sides) rounds.push(await microsPerCall(call));
    }
    const oursMicros = median(oursRounds);
    const handWrittenMicros = median(handRounds);
    const wholeMicros = median(wholeRounds);
    const ratio = handWrittenMicros / oursMicros;
    console.log(`team of ${ROWS.toLocaleString('en')} audit rows (seeded in ${seedSeconds.toFixed(1)} s), 20 tokens, a page of 50 of one token's`);
    console.log(`list_activity handler  ${oursMicros.toFixed(0).padStart(6)} µs per page`);
    console.log(`hand-written query     ${handWrittenMicros.toFixed(0).padStart(6)} µs per page`);
    console.log(`through invoke()       ${wholeMicros.toFixed(0).padStart(6)} µs per page (token check, validation, last-used)`);
    console.log(`hand-written / ours = ${ratio.toFixed(2)} (target >= ${TARGET}: ${ratio >= TARGET ? 'met' : 'NOT met'})`);
    return {
      rows: ROWS, oursMicros, handWrittenMicros, invokeMicros: wholeMicros,
      ratios: { handWrittenOverOurs: ratio }, target: { min: TARGET, met: ratio >= TARGET },
    };
  } finally {
    handle?.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
