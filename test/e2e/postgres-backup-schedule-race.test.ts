// Two nodes sharing one PostgreSQL, both with their engine and the same (test-controlled)
// clock, race for the same backup slot many times at once: one backup is taken. And of two
// nodes pruning rows at the same moment, one prunes and the other skips the pass.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { BackupScheduler } from '../../src/engine/backup-schedule/scheduler.js';
import { writeSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { pruneRows } from '../../src/engine/row-retention/prune-rows.js';
import { createTestSchema, TEST_POOL_SIZE, type TestSchema } from '../support/database.js';
import { seedTeam, tempDataDir, type SeededTeam } from '../support/fixtures.js';

/** Who the schedules set here are changed by, as the panel names a member. */
const BY_THE_TEST = { by: { type: 'user', id: 'usr_thetest000000000000' } } as const;

describe('two nodes on one PostgreSQL and one backup slot', () => {
  let schema: TestSchema;
  const clock = { now: Date.parse('2025-06-01T00:00:00Z') };
  const nodes: App[] = [];
  let team: SeededTeam;

  beforeAll(async () => {
    schema = await createTestSchema('schedule_race');
    for (const name of ['A', 'B']) {
      const app = createApp({
        ...defaultConfig(tempDataDir()), database: { url: schema.url, poolSize: TEST_POOL_SIZE },
        engine: {
          node: name, clock: () => clock.now, backupScheduleIntervalMs: 0, backupRetentionIntervalMs: 0,
          rowRetentionIntervalMs: 0, reconcileIntervalMs: 0, pollMs: 50,
        },
      });
      await app.db.ready();
      await app.engine.start();
      nodes.push(app);
    }
    team = await seedTeam(nodes[0]!);
    const off = { frequency: 'off', time: '00:00', keep_daily: 1, keep_weekly: 0, keep_monthly: 0 } as const;
    await writeSchedule(nodes[0]!.db.kysely, team.serviceIds[0], { frequency: 'daily', time: '03:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 }, clock.now, BY_THE_TEST);
    await writeSchedule(nodes[0]!.db.kysely, team.serviceIds[1], off, clock.now, BY_THE_TEST);
    await writeSchedule(nodes[0]!.db.kysely, team.copyId, off, clock.now, BY_THE_TEST);
  });
  afterAll(async () => {
    for (const app of nodes) {
      await app.engine.close({ services: 'stop' });
      await app.close();
      rmSync(app.db.dataDir, { recursive: true, force: true });
    }
    await schema?.drop();
  });

  it('takes one backup for the slot, whichever node ticks first and however many ticks race', async () => {
    clock.now = Date.parse('2025-06-01T03:00:05Z');
    // Besides each engine's scheduler, four more per node: ten passes at once, each on its own connection.
    const schedulers = [
      ...nodes.map((app) => app.engine.scheduler),
      ...Array.from({ length: 8 }, (_, i) => new BackupScheduler(nodes[i % 2]!.db, {
        clock: () => clock.now, intervalMs: 0, retryDelayMs: 600_000, maxAttempts: 3, onError: (error) => { throw error; },
      })),
    ];
    const ticks = await Promise.all(schedulers.map((scheduler) => scheduler.tick()));
    const queued = [...new Set(ticks.flatMap((tick) => tick.queued))];
    expect(queued).toHaveLength(1);
    const deadline = Date.now() + 30_000;
    let backups;
    for (;;) {
      backups = await nodes[1]!.db.kysely.selectFrom('backups').select(['id', 'state', 'kind'])
        .where('service_id', '=', team.serviceIds[0]).execute();
      if (backups.every((backup) => backup.state !== 'pending') || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(backups).toEqual([{ id: queued[0], state: 'completed', kind: 'scheduled' }]);
    const operations = await nodes[0]!.db.kysely.selectFrom('operations').select('id').where('kind', '=', 'backup').execute();
    expect(operations).toHaveLength(1);
  });

  it('lets one node prune rows at a time: of two passes at the same moment, one runs and the other skips', async () => {
    const fallback = { audit: 400, webhooks: 30, operations: 90 };
    const passes = await Promise.all(nodes.map((app, i) => pruneRows(app.db, { owner: `node-${i}`, now: clock.now, fallback })));
    expect(passes.map((pass) => pass.ran).sort()).toEqual([false, true]);
    // The lease is released at the end of a pass: the next one, on either node, runs.
    expect((await pruneRows(nodes[1]!.db, { owner: 'node-1', now: clock.now, fallback })).ran).toBe(true);
  });
});
