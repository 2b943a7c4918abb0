// Backup retention on a real database and real files: what a pass removes disappears from disk
// and from the list; the newest backups, failed ones' records, and any backup a restore in
// flight names are kept; a deleted service's backups all go, and so do files no row names.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { newId } from '../../src/db/ids.js';
import { setTeamRetention } from '../../src/db/repositories/backup-retention.js';
import { endBackup, insertPendingBackup, type BackupKind } from '../../src/db/repositories/backups.js';
import { insertOperation } from '../../src/db/repositories/operations.js';
import { backupFilePath } from '../../src/engine/backup-files.js';
import { DEFAULT_RETENTION, pruneBackups } from '../../src/engine/backup-retention.js';
import { seedTeam, tempDataDir, type SeededTeam } from '../support/fixtures.js';

describe('pruneBackups', () => {
  const apps: App[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  async function setUp(): Promise<{ app: App; team: SeededTeam }> {
    const app = createApp({ ...defaultConfig(tempDataDir()), engine: { backupRetentionIntervalMs: 0 } });
    apps.push(app);
    return { app, team: await seedTeam(app) };
  }

  let clock = Date.parse('2025-01-01T00:00:00Z');
  /** A backup as the engine leaves it: its row, and (when completed) its file under the data directory. */
  async function backupOf(app: App, team: SeededTeam, serviceId: string, kind: BackupKind, state: 'completed' | 'failed' = 'completed') {
    const id = newId('bak');
    const at = new Date((clock += 60_000)).toISOString();
    const operation = await insertOperation(app.db.kysely, {
      teamId: team.teamId, kind: 'backup', serviceId, serverId: null, parameters: { backup_id: id }, tokenId: null, channel: 'api',
      idempotencyKey: null, fingerprint: null,
    }, newId('op'), at);
    await insertPendingBackup(app.db.kysely, { id, teamId: team.teamId, serviceId, kind, operationId: operation.id, at });
    const file = backupFilePath(app.db.dataDir, serviceId, id);
    if (state === 'completed') {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, 'zstd bytes');
      await endBackup(app.db.kysely, id, { state, filePath: file, sizeBytes: 10, sha256: '0'.repeat(64), at });
    } else {
      await endBackup(app.db.kysely, id, { state, reason: 'The disk was full.', at });
    }
    return { id, file };
  }

  const rowsOf = async (app: App, serviceId: string) => (await app.db.kysely.selectFrom('backups').select('id')
    .where('service_id', '=', serviceId).orderBy('created_at').execute()).map((row) => row.id);

  it('keeps the newest safety backups of each service and removes the older ones\' files and rows, leaving manual ones', async () => {
    const { app, team } = await setUp();
    const serviceId = team.serviceIds[0];
    const manual = await backupOf(app, team, serviceId, 'manual');
    const safety = [];
    for (let i = 0; i < 5; i++) safety.push(await backupOf(app, team, serviceId, 'safety'));
    const failed = await backupOf(app, team, serviceId, 'safety', 'failed');

    const removed = await pruneBackups(app.db, { node: 'this-node', defaults: DEFAULT_RETENTION });
    expect(removed.sort()).toEqual([safety[0]?.id, safety[1]?.id].sort());
    expect(safety.map((backup) => existsSync(backup.file))).toEqual([false, false, true, true, true]);
    expect(existsSync(manual.file)).toBe(true);
    expect(await rowsOf(app, serviceId)).toEqual([manual.id, ...safety.slice(2).map((backup) => backup.id), failed.id]);
  });

  it('keeps a backup a running restore names, however old, and follows a team\'s own numbers', async () => {
    const { app, team } = await setUp();
    const serviceId = team.serviceIds[0];
    const manual = [];
    for (let i = 0; i < 3; i++) manual.push(await backupOf(app, team, serviceId, 'manual'));
    await setTeamRetention(app.db.kysely, team.teamId, { manual: 1, safety: null });
    await insertOperation(app.db.kysely, {
      teamId: team.teamId, kind: 'restore', serviceId, serverId: null, tokenId: null, channel: 'api', idempotencyKey: null, fingerprint: null,
      parameters: { backup_id: manual[0]?.id, previous_state: 'running', safety_backup_id: newId('bak') },
    }, newId('op'), new Date().toISOString());

    expect(await pruneBackups(app.db, { node: 'this-node', defaults: DEFAULT_RETENTION })).toEqual([manual[1]?.id]);
    expect(manual.map((backup) => existsSync(backup.file))).toEqual([true, false, true]);
  });

  it('removes every backup of a deleted service, files and rows, and files no row names', async () => {
    const { app, team } = await setUp();
    const [deletedId, keptId] = team.serviceIds;
    const gone = [await backupOf(app, team, deletedId, 'manual'), await backupOf(app, team, deletedId, 'safety'), await backupOf(app, team, deletedId, 'manual', 'failed')];
    const kept = await backupOf(app, team, keptId, 'manual');
    await app.db.kysely.updateTable('erp_services').set({ deleted_at: new Date().toISOString() }).where('id', '=', deletedId).execute();
    const leftOver = backupFilePath(app.db.dataDir, keptId, 'bak_leftbyacrash000000000');
    writeFileSync(leftOver, 'zstd bytes');

    expect((await pruneBackups(app.db, { node: 'this-node', defaults: DEFAULT_RETENTION })).sort()).toEqual(gone.map((backup) => backup.id).sort());
    expect(await rowsOf(app, deletedId)).toEqual([]);
    expect(existsSync(join(app.db.dataDir, 'backups', deletedId))).toBe(false);
    expect(readdirSync(dirname(kept.file))).toEqual([`${kept.id}.sqlite.zst`]);
  });

  it('writes one activity row per removal: retention\'s for manual, safety and a deleted service\'s, the schedule\'s for a scheduled one', async () => {
    const { app, team } = await setUp();
    const [liveId, deletedId] = team.serviceIds;
    const safety = [];
    for (let i = 0; i < 4; i++) safety.push(await backupOf(app, team, liveId, 'safety'));
    const failedScheduled = [];
    for (let i = 0; i < 6; i++) failedScheduled.push(await backupOf(app, team, liveId, 'scheduled', 'failed'));
    const ofDeleted = await backupOf(app, team, deletedId, 'manual');
    await app.db.kysely.updateTable('erp_services').set({ deleted_at: new Date().toISOString() }).where('id', '=', deletedId).execute();

    const removed = await pruneBackups(app.db, { node: 'this-node', defaults: DEFAULT_RETENTION });
    expect(removed.sort()).toEqual([safety[0]!.id, failedScheduled[0]!.id, ofDeleted.id].sort());
    const rows = await app.db.kysely.selectFrom('audit_log').select(['target_id', 'actor_type', 'actor_id', 'channel', 'action', 'team_id'])
      .where('action', '=', 'prune_backup').orderBy('target_id').execute();
    const row = (channel: string, backupId: string) => ({
      target_id: backupId, actor_type: 'operator', actor_id: null, channel, action: 'prune_backup', team_id: team.teamId,
    });
    // Nobody changed the schedule since the scheduler wrote it: no token or member is named.
    expect(rows).toEqual([row('retention', safety[0]!.id), row('schedule', failedScheduled[0]!.id), row('retention', ofDeleted.id)]
      .sort((a, b) => a.target_id.localeCompare(b.target_id)));
  });
});
