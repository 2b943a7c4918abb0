// Two `teaminfra serve` processes on the same data: their workers compete for one queue, and
// every operation is still taken once and runs once (the lease is taken by compare-and-set
// inside a write transaction). A second process, not a second connection in this one: SQLite
// connections of one thread would block each other.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { newId, nowIso } from '../../src/db/ids.js';
import { insertOperation, type OperationKind } from '../../src/db/repositories/operations.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { startServe, type ServeProcess } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { killProcessesMatching, processesMatching } from '../engine/support/engine-http.js';

describe.skipIf(process.platform !== 'linux')('two serve processes sharing one operations queue', () => {
  const dataDir = tempDataDir();
  const db = openDatabase(dataDir);
  const serves: ServeProcess[] = [];
  afterAll(async () => {
    for (const serve of serves) await serve.stop('SIGTERM');
    await db.close();
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function queueAll(teamId: string, serverId: string, serviceIds: string[], kind: OperationKind): Promise<string[]> {
    const ids: string[] = [];
    await db.kysely.transaction().execute(async (trx) => {
      for (const serviceId of serviceIds) {
        ids.push((await insertOperation(trx, {
          teamId, kind, serviceId, serverId, parameters: {}, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null,
        }, newId('op'), nowIso())).id);
      }
    });
    return ids;
  }

  function waitForAll(operationIds: string[], timeoutMs = 60_000) {
    const states = db.sqlite.prepare(`SELECT id, state, reason FROM operations WHERE id IN (${operationIds.map(() => '?').join(',')})`);
    return (async () => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = states.all(...operationIds) as { id: string; state: string; reason: string | null }[];
        if (rows.every((row) => row.state === 'succeeded' || row.state === 'failed')) return rows;
        if (Date.now() > deadline) throw new Error(`still open: ${JSON.stringify(rows.filter((row) => row.state !== 'succeeded'))}`);
        await sleep(25);
      }
    })();
  }

  it('starts and stops twelve services, each operation taken once and each service run once', async () => {
    const teamId = await insertTeam(db.kysely, { name: 'Shared', plan: 'starter', timezone: 'UTC' });
    const serverId = await insertServer(db.kysely, { teamId, name: 'shared' });
    const serviceIds: string[] = [];
    for (let index = 0; index < 12; index++) serviceIds.push(await insertService(db.kysely, { teamId, serverId, name: `S${index}` }));
    // Twelve services start at once on a CI machine shared with other suites: more time to boot.
    const slowHost = { TEAMINFRA_START_TIMEOUT_MS: '30000' };
    serves.push(await startServe(dataDir, [], slowHost), await startServe(dataDir, [], slowHost));

    const starts = await queueAll(teamId, serverId, serviceIds, 'start');
    const started = await waitForAll(starts);
    expect(started.map((row) => row.state), JSON.stringify(started.filter((row) => row.reason))).toEqual(serviceIds.map(() => 'succeeded'));
    const running = db.sqlite.prepare("SELECT operation_id FROM operation_transitions WHERE state = 'running'").all() as { operation_id: string }[];
    expect(running.map((row) => row.operation_id).sort()).toEqual([...starts].sort());
    for (const serviceId of serviceIds) expect(processesMatching(serviceId)).toHaveLength(1);

    const stops = await queueAll(teamId, serverId, serviceIds, 'stop');
    expect((await waitForAll(stops)).every((row) => row.state === 'succeeded')).toBe(true);
    for (const serviceId of serviceIds) expect(processesMatching(serviceId)).toEqual([]);
  }, 150_000);
});
