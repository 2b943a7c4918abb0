// The backup scheduler with a clock the test moves, on a real database and the real local
// driver (each backup a real zstd file of the service's SQLite database): one backup per slot
// however often it ticks, a missed slot caught up once after a restart (not once per slot
// missed), bounded retries of a failing backup, and after 40 simulated days exactly the backups
// the schedule's retention names, never a manual one nor one a restore waiting for approval names.
import { existsSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../../src/app.js';
import { newId } from '../../../src/db/ids.js';
import { insertOperation } from '../../../src/db/repositories/operations.js';
import { DEFAULT_RETENTION, pruneBackups } from '../../../src/engine/backup-retention.js';
import { defaultNodeName } from '../../../src/engine/node-name.js';
import { writeSchedule } from '../../../src/engine/backup-schedule/service-schedule.js';
import { markServerLost } from '../../../src/engine/lost-server.js';
import { insertCompletedBackup, seedTeam, type SeededTeam } from '../../support/fixtures.js';
import { testLocation, type TestLocation } from '../../support/database.js';

/** Who the schedules set here are changed by, as the panel names a member. */
const BY_THE_TEST = { by: { type: 'user', id: 'usr_thetest000000000000' } } as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Node {
  app: App;
  clock: { now: number };
}

describe('the backup scheduler', () => {
  const open: App[] = [];
  const locations: TestLocation[] = [];
  afterEach(async () => {
    for (const app of open.splice(0)) {
      await app.engine.close({ services: 'stop' });
      await app.close();
    }
    for (const location of locations.splice(0)) await location.remove();
  });

  async function place(): Promise<TestLocation> {
    const location = await testLocation(undefined, 'scheduler');
    locations.push(location);
    return location;
  }

  /** An app with its engine on `location`, its scheduler and retention moved only by the test. */
  async function startNode(location: TestLocation, clock: { now: number }, engine: Record<string, unknown> = {}): Promise<Node> {
    const app = createApp({
      ...defaultConfig(location.dataDir), database: location.database,
      engine: {
        clock: () => clock.now, backupScheduleIntervalMs: 0, backupRetentionIntervalMs: 0, rowRetentionIntervalMs: 0,
        reconcileIntervalMs: 0, pollMs: 50, ...engine,
      },
    });
    open.push(app);
    await app.db.ready();
    await app.engine.start();
    return { app, clock };
  }

  async function stopNode(node: Node): Promise<void> {
    open.splice(open.indexOf(node.app), 1);
    await node.app.engine.close({ services: 'stop' });
    await node.app.close();
  }

  /** One service, backed up daily at 03:00 UTC with `keep`; every other schedule of the team off. */
  async function oneScheduledService(node: Node, keep = { keep_daily: 7, keep_weekly: 4, keep_monthly: 6 }): Promise<{ team: SeededTeam; serviceId: string }> {
    const team = await seedTeam(node.app);
    const db = node.app.db.kysely;
    await writeSchedule(db, team.serviceIds[0], { frequency: 'daily', time: '03:00', ...keep }, node.clock.now, BY_THE_TEST);
    for (const other of [team.serviceIds[1], team.copyId]) {
      await writeSchedule(db, other, { frequency: 'off', time: '00:00', keep_daily: 1, keep_weekly: 0, keep_monthly: 0 }, node.clock.now, BY_THE_TEST);
    }
    return { team, serviceId: team.serviceIds[0] };
  }

  async function scheduledBackups(app: App, serviceId: string) {
    return app.db.kysely.selectFrom('backups').select(['id', 'state', 'created_at', 'file_path', 'kind'])
      .where('service_id', '=', serviceId).where('kind', '=', 'scheduled').orderBy('created_at').execute();
  }

  /** Waits (at most 30 s) until no backup of the service is pending. */
  async function settled(app: App, serviceId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const pending = await app.db.kysely.selectFrom('backups').select('id').where('service_id', '=', serviceId).where('state', '=', 'pending').execute();
      if (pending.length === 0) return;
      if (Date.now() > deadline) throw new Error(`backups still pending after 30 s: ${pending.map((row) => row.id).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('takes one backup per slot, however often it ticks, and none before the slot', async () => {
    const node = await startNode(await place(), { now: Date.parse('2025-03-01T00:00:00Z') });
    const { serviceId } = await oneScheduledService(node);
    await node.app.engine.scheduler.tick();
    node.clock.now = Date.parse('2025-03-01T02:59:00Z');
    expect((await node.app.engine.scheduler.tick()).queued).toEqual([]);

    node.clock.now = Date.parse('2025-03-01T03:00:00Z');
    const ticks = await Promise.all([1, 2, 3].map(() => node.app.engine.scheduler.tick()));
    const again = await node.app.engine.scheduler.tick();
    await settled(node.app, serviceId);
    node.clock.now = Date.parse('2025-03-01T03:30:00Z');
    const later = await node.app.engine.scheduler.tick();

    expect(new Set(ticks.flatMap((tick) => tick.queued)).size).toBe(1);
    expect([again.queued, later.queued]).toEqual([[], []]);
    const backups = await scheduledBackups(node.app, serviceId);
    expect(backups).toMatchObject([{ state: 'completed', kind: 'scheduled', created_at: '2025-03-01T03:00:00.000Z' }]);
    expect(existsSync(backups[0]!.file_path!)).toBe(true);
    const schedule = await node.app.db.kysely.selectFrom('backup_schedules').selectAll().where('service_id', '=', serviceId).executeTakeFirstOrThrow();
    expect(schedule.next_run_at).toBe('2025-03-02T03:00:00.000Z');
  });

  it('after every node was down for three slots, takes one backup when one comes back, then the next slot as usual', async () => {
    const location = await place();
    const clock = { now: Date.parse('2025-03-01T12:00:00Z') };
    const first = await startNode(location, clock);
    const { serviceId } = await oneScheduledService(first);
    await first.app.engine.scheduler.tick();
    await stopNode(first);

    clock.now = Date.parse('2025-03-04T12:00:00Z');
    const second = await startNode(location, clock);
    const back = await second.app.engine.scheduler.tick();
    const backAgain = await second.app.engine.scheduler.tick();
    await settled(second.app, serviceId);
    expect(back.queued).toHaveLength(1);
    expect(backAgain.queued).toEqual([]);
    expect(await scheduledBackups(second.app, serviceId)).toMatchObject([{ state: 'completed', created_at: '2025-03-04T12:00:00.000Z' }]);

    clock.now = Date.parse('2025-03-05T03:00:00Z');
    expect((await second.app.engine.scheduler.tick()).queued).toHaveLength(1);
    await settled(second.app, serviceId);
    expect((await scheduledBackups(second.app, serviceId)).map((backup) => backup.created_at))
      .toEqual(['2025-03-04T12:00:00.000Z', '2025-03-05T03:00:00.000Z']);
  });

  it('tries a failing scheduled backup again a bounded number of times, each failure a backup.failed event', async () => {
    const location = await place();
    const node = await startNode(location, { now: Date.parse('2025-03-01T00:00:00Z') }, { backupRetryDelayMs: 10 * 60_000, backupMaxAttempts: 3 });
    const { serviceId } = await oneScheduledService(node);
    await node.app.engine.scheduler.tick();
    // A file where the service's backups folder goes: every backup of it fails until it is removed.
    const folder = join(location.dataDir, 'backups', serviceId);
    mkdirSync(join(location.dataDir, 'backups'), { recursive: true });
    writeFileSync(folder, 'not a folder');

    for (const minutes of [0, 10, 20, 30, 40]) {
      node.clock.now = Date.parse('2025-03-01T03:00:00Z') + minutes * 60_000;
      await node.app.engine.scheduler.tick();
      await settled(node.app, serviceId);
    }
    const backups = await scheduledBackups(node.app, serviceId);
    expect(backups.map((backup) => backup.state)).toEqual(['failed', 'failed', 'failed']);
    const events = await node.app.db.kysely.selectFrom('events').select('payload').where('type', '=', 'backup.failed').execute();
    expect(events.map((event) => JSON.parse(event.payload).data.backup)).toEqual(backups.map((backup) => expect.objectContaining({ id: backup.id, kind: 'scheduled', state: 'failed' })));

    // The next slot is tried afresh, and succeeds once the disk is right again.
    rmSync(folder);
    node.clock.now = Date.parse('2025-03-02T03:00:00Z');
    await node.app.engine.scheduler.tick();
    await settled(node.app, serviceId);
    expect((await scheduledBackups(node.app, serviceId)).map((backup) => backup.state)).toEqual(['failed', 'failed', 'failed', 'completed']);
  });

  it('tries a failed slot no more once the schedule is turned off', async () => {
    const location = await place();
    const node = await startNode(location, { now: Date.parse('2025-03-01T00:00:00Z') }, { backupRetryDelayMs: 10 * 60_000, backupMaxAttempts: 3 });
    const { serviceId } = await oneScheduledService(node);
    await node.app.engine.scheduler.tick();
    mkdirSync(join(location.dataDir, 'backups'), { recursive: true });
    writeFileSync(join(location.dataDir, 'backups', serviceId), 'not a folder');
    node.clock.now = Date.parse('2025-03-01T03:00:00Z');
    expect((await node.app.engine.scheduler.tick()).queued).toHaveLength(1);
    await settled(node.app, serviceId);

    await writeSchedule(node.app.db.kysely, serviceId, { frequency: 'off', time: '03:00', keep_daily: 7, keep_weekly: 4, keep_monthly: 6 }, node.clock.now, BY_THE_TEST);
    for (const minutes of [10, 20, 30]) {
      node.clock.now = Date.parse('2025-03-01T03:00:00Z') + minutes * 60_000;
      expect((await node.app.engine.scheduler.tick()).queued).toEqual([]);
    }
    expect((await scheduledBackups(node.app, serviceId)).map((backup) => backup.state)).toEqual(['failed']);
  });

  it('queues no backup, nor a retry, of a service whose server was marked lost', async () => {
    const node = await startNode(await place(), { now: Date.parse('2025-03-01T00:00:00Z') });
    const { team, serviceId } = await oneScheduledService(node);
    await node.app.engine.scheduler.tick();
    node.clock.now = Date.parse('2025-03-01T03:00:00Z');
    expect((await node.app.engine.scheduler.tick()).queued).toHaveLength(1);
    await settled(node.app, serviceId);
    // The slot's backup failed: its retry would be due at the next tick, as would the next slot.
    await node.app.db.kysely.updateTable('backups').set({ state: 'failed', reason: 'test' }).where('service_id', '=', serviceId).execute();
    await markServerLost(node.app.db.kysely, team.serverIds[0]);

    for (const at of ['2025-03-01T03:20:00Z', '2025-03-02T03:00:00Z', '2025-03-03T03:00:00Z']) {
      node.clock.now = Date.parse(at);
      expect((await node.app.engine.scheduler.tick()).queued).toEqual([]);
    }
    const operations = await node.app.db.kysely.selectFrom('operations').select('id').where('service_id', '=', serviceId).where('kind', '=', 'backup').execute();
    expect(operations).toHaveLength(1);
  });

  it('after 40 simulated days keeps exactly the backups retention names (7 daily, 4 weekly, 6 monthly), a manual one, and one a pending restore names', async () => {
    const start = Date.parse('2025-01-01T00:00:00Z');
    const node = await startNode(await place(), { now: start });
    const { team, serviceId } = await oneScheduledService(node);
    const manualFile = join(node.app.db.dataDir, 'manual-backup');
    writeFileSync(manualFile, 'bytes');
    const manual = await insertCompletedBackup(node.app, { teamId: team.teamId, serviceId, filePath: manualFile, bytes: Buffer.from('bytes') });
    await node.app.engine.scheduler.tick();
    let namedByRestore: string | undefined;
    for (let day = 0; day < 40; day++) {
      node.clock.now = start + day * DAY + 3 * HOUR;
      const { queued } = await node.app.engine.scheduler.tick();
      expect(queued).toHaveLength(1);
      await settled(node.app, serviceId);
      if (day === 2) {
        // A restore of the third day's backup, asked by a token that needs approval: it waits, so its backup stays.
        namedByRestore = queued[0];
        await insertOperation(node.app.db.kysely, {
          teamId: team.teamId, kind: 'restore', serviceId, serverId: null, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null,
          parameters: { backup_id: namedByRestore, previous_state: 'stopped', safety_backup_id: newId('bak') },
        }, newId('op'), new Date(node.clock.now).toISOString());
        await node.app.db.kysely.updateTable('operations').set({ state: 'awaiting_approval' }).where('kind', '=', 'restore').execute();
      }
      // The engine's worker made the service's server this node's (it runs its backups).
      await pruneBackups(node.app.db, { node: defaultNodeName(), defaults: DEFAULT_RETENTION, now: node.clock.now });
    }

    const kept = await scheduledBackups(node.app, serviceId);
    expect(kept.map((backup) => backup.created_at.slice(0, 10))).toEqual([
      '2025-01-03', // named by the restore awaiting approval
      '2025-01-19', '2025-01-26', // the newest of ISO weeks 3 and 4
      '2025-01-31', // the newest of January
      '2025-02-02', // the newest of ISO week 5
      '2025-02-03', '2025-02-04', '2025-02-05', '2025-02-06', '2025-02-07', '2025-02-08', '2025-02-09', // the last 7 days
    ]);
    expect(kept.find((backup) => backup.id === namedByRestore)).toBeDefined();
    for (const backup of kept) expect(existsSync(backup.file_path!)).toBe(true);
    const files = await node.app.db.kysely.selectFrom('backups').select('id').where('id', '=', manual).execute();
    expect(files).toHaveLength(1);
    expect(existsSync(manualFile)).toBe(true);
  }, 120_000);
});
