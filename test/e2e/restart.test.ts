// A restart on the same data directory changes nothing and loses nothing: the schema is applied
// again, every row is kept as it was, and tokens keep working.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { admin, startServe, type ServeProcess } from '../support/cli.js';
import { getJson, tempDataDir } from '../support/fixtures.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';

async function dumpEveryTable(dataDir: string): Promise<Record<string, unknown[]>> {
  const db = openDatabase(dataDir);
  try {
    const tables = db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
    const dump: Record<string, unknown[]> = {};
    for (const { name } of tables) dump[name] = db.sqlite.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
    dump.__schema = db.sqlite.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    return dump;
  } finally {
    await db.close();
  }
}

describe('teaminfra serve restart', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    // The demo's staging copy runs as its own process, detached from serve on purpose.
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every row and the same answers across a restart', async () => {
    serve = await startServe(dataDir, ['--demo']);
    const token = /API token:\s+(tinf_\S+)/.exec(serve.output())?.[1];
    expect(token).toBeDefined();
    const teamId = /team:\s+(team_\S+)/.exec(serve.output())?.[1] as string;
    await admin(dataDir, ['add-member', '--team', teamId, '--email', 'ops@example.com', '--role', 'admin']);
    const before = await getJson(serve.baseUrl, '/api/service-erp', token);
    expect(before.status).toBe(200);
    expect(before.body.data.map((service: { name: string }) => service.name)).toEqual(['Production ERP', 'Accounting ERP']);
    expect(await serve.stop()).toBe(0);
    const rowsBefore = await dumpEveryTable(dataDir);

    serve = await startServe(dataDir, ['--demo']);
    // The demo is seeded into an empty database only: no second token is printed.
    expect(serve.output()).not.toContain('API token:');
    const after = await getJson(serve.baseUrl, '/api/service-erp', token);
    expect(after.body).toEqual(before.body);
    expect(await serve.stop()).toBe(0);

    const rowsAfter = await dumpEveryTable(dataDir);
    // Only the token's last-used time may move, and when the demo's events (its staging copy's)
    // were fanned out to webhooks, on either side of the restart; everything else is as it was.
    // The scheduler writes a service's schedule row the first time it sees the service
    // (src/engine/backup-schedule/scheduler.ts): the demo's staging copy, made after the first run's
    // tick, may get its row in the second run. The rows that existed are unchanged.
    const scheduled = new Set(rowsBefore.backup_schedules?.map((row) => (row as { service_id: string }).service_id));
    const withoutLastUsed = (dump: Record<string, unknown[]>) => ({
      ...dump,
      api_tokens: dump.api_tokens?.map((row) => ({ ...(row as object), last_used_at: null })),
      events: dump.events?.map((row) => ({ ...(row as object), dispatched_at: null })),
      // Each node marks itself seen while it runs (src/engine/node-heartbeat.ts).
      nodes: dump.nodes?.map((row) => ({ ...(row as object), last_seen_at: null })),
      backup_schedules: dump.backup_schedules?.filter((row) => scheduled.has((row as { service_id: string }).service_id)),
    });
    expect(withoutLastUsed(rowsAfter)).toEqual(withoutLastUsed(rowsBefore));
    expect(rowsAfter.teams).toHaveLength(1);
    expect(rowsAfter.erp_services).toHaveLength(3);
    expect(rowsAfter.memberships).toHaveLength(2);
  });
});
