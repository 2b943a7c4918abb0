// A restore of a running service, with `teaminfra serve` killed (SIGKILL) at each moment of it
// and started again on the same data: the restore is resumed and finishes, the backup's data is
// in place, and the service runs again, once, because it ran before. (Review: killed 90-120 ms
// in, the restore showed succeeded and the service stopped: the resumed attempt found the
// service stopped by the first one and took that for how it was.)
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteDb } from '../../src/db/connect.js';
import { seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { act, fetchText, processesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { countProducts, deleteProducts } from '../engine/support/service-data.js';
import { leaveNothingBehind, serveWithBackup } from './support/served-backup.js';

interface Progress {
  operation: string;
  servicePid: number | null;
  safetyBackup: string | null;
}

/** When to kill serve during the restore: a moment it can be seen to reach, or a delay after the request. */
const MOMENTS: { name: string; reached: (progress: Progress, pidBefore: number, serviceId: string) => boolean }[] = [
  { name: 'as soon as a worker took it', reached: (p) => p.operation === 'running' },
  { name: 'once the service was stopped', reached: (p, _pid, id) => p.operation === 'running' && processesMatching(id).length === 0 },
  { name: 'once the safety backup was taken', reached: (p) => p.safetyBackup === 'completed' },
  { name: 'once the service was spawned on the restored data', reached: (p, pidBefore) => p.servicePid !== null && p.servicePid !== pidBefore },
  ...[60, 90, 120, 150].map((ms) => ({ name: `${ms} ms after the request`, reached: delay(ms) })),
];

function delay(ms: number): () => boolean {
  let since: number | undefined;
  return () => Date.now() - (since ??= Date.now()) >= ms;
}

describe.skipIf(process.platform !== 'linux')('teaminfra serve killed in the middle of a restore of a running service', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let db: SqliteDb;
  let token: string;
  let serviceId: string;
  let database: string;
  let backupId: string;
  let productsInBackup: number;

  beforeAll(async () => {
    const seeded = await seedThroughCli(dataDir, { team: 'Restore crash team', service: 'Restored ERP' });
    const { serverId } = seeded;
    ({ serviceId, token } = seeded);
    ({ serve, db, database, backupId, productsInBackup } = await serveWithBackup(dataDir, { serverId, serviceId }, token));
  }, 60_000);
  afterAll(() => leaveNothingBehind(dataDir, serve, db));

  it.each(MOMENTS)('finishes the restore and runs the service once, when serve is killed $name', async ({ reached }) => {
    // Each case starts from a running service, whatever the one before left.
    if ((await send((serve as ServeProcess).baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body.state !== 'running') {
      await act((serve as ServeProcess).baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    }
    // What the restore must bring back.
    deleteProducts(database);
    const pidBefore = (db.sqlite.prepare('SELECT pid FROM erp_services WHERE id = ?').get(serviceId) as { pid: number }).pid;
    const accepted = await send((serve as ServeProcess).baseUrl, 'POST', `/api/backups/${backupId}/restore`, token);
    expect(accepted.status).toBe(202);
    const progressOf = db.sqlite.prepare(`SELECT o.state AS operation, s.pid AS servicePid, b.state AS safetyBackup
      FROM operations o JOIN erp_services s ON s.id = o.service_id
      LEFT JOIN backups b ON b.id = json_extract(o.parameters, '$.safety_backup_id') WHERE o.id = ?`);
    const deadline = Date.now() + 10_000;
    while (!reached(progressOf.get(accepted.body.id) as Progress, pidBefore, serviceId) && Date.now() < deadline) await sleep(1);
    expect(await serve?.stop('SIGKILL')).toBeNull();

    serve = await startServe(dataDir);
    const ended = await waitForOperation(serve.baseUrl, token, accepted.body.id);
    expect(ended).toMatchObject({ state: 'succeeded', reason: null });
    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('running');
    expect(processesMatching(serviceId)).toHaveLength(1);
    expect((await fetchText(service.url)).status).toBe(200);
    expect(countProducts(database)).toBe(productsInBackup);
    const completed = db.sqlite.prepare(`SELECT count(*) AS count FROM events WHERE type = 'restore.completed'
      AND json_extract(payload, '$.data.operation_id') = ?`).get(accepted.body.id) as { count: number };
    expect(completed.count).toBe(1);
  }, 60_000);
});
