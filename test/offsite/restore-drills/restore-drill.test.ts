// Restore drills on the test Docker engine against a real S3-compatible store (Ceph's radosgw):
// the newest off-site backup of a real service (the bundled ERP image) is fetched, decrypted,
// restored into a throwaway service on the same server, started, health checked and removed,
// proving it (backup.verified, get_backup's verified_at); the same backup's object changed in
// the store is flagged (backup.verify_failed with a sentence, verify_reason). Either way the
// service's own containers and volumes are untouched and no throwaway is left on the engine.
// The operator's command runs with a newcomer's settings (no TEAMINFRA_* variable).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL, labelFilter } from '../../../src/engine/docker/labels.js';
import { admin } from '../../support/cli.js';
import type { TestServer } from '../../support/fixtures.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../../engine/docker/support/docker-engine.js';
import { startDockerTeam } from '../../engine/docker/support/docker-team.js';
import { teamCalls } from '../../engine/docker/support/team-calls.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from '../support/object-store-server.js';

const NEWCOMER_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEAMINFRA_')));

describe.runIf(dockerAvailable && objectStoreInstalled)('restore drills', () => {
  const api = testDockerApi();
  const scratch = mkdtempSync(join(tmpdir(), 'drills-'));
  let store: TestObjectStore;
  let server: TestServer;
  let token: string;
  let teamId: string;
  let serverId: string;
  let serviceId: string;
  let backupId: string;
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);

  /** Everything of the server on the engine (containers with their ids and start times, volumes), by service. */
  const engineState = async () => {
    const filters = labelFilter({ [LABEL.serverId]: serverId });
    const containers = await api.json<{ Id: string; State: string; Labels: Record<string, string> }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    const volumes = (await api.json<{ Volumes: { Name: string; Labels: Record<string, string> }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    const started = await Promise.all(containers.map(async (each) =>
      (await api.json<{ State: { StartedAt: string } }>('GET', `/containers/${each.Id}/json`)).State.StartedAt));
    return {
      containers: containers.map((each, index) => `${each.Labels[LABEL.serviceId]} ${each.Id} ${each.State} ${started[index]}`).sort(),
      volumes: volumes.filter((each) => each.Labels[LABEL.serviceId]).map((each) => `${each.Labels[LABEL.serviceId]} ${each.Name}`).sort(),
    };
  };
  const drillEvents = async () => (await server.app.db.kysely.selectFrom('events').select(['type', 'payload'])
    .where('team_id', '=', teamId).where('type', 'in', ['backup.verified', 'backup.verify_failed']).orderBy('id').execute())
    .map((event) => ({ type: event.type, ...JSON.parse(event.payload).data }));

  beforeAll(async () => {
    const started = startObjectStore();
    const docker = await startDockerTeam({ engine: { offsite: { intervalMs: 0 }, drills: { intervalMs: 0 }, backupScheduleIntervalMs: 0 } });
    ({ server, token, teamId } = docker);
    serverId = await docker.addServer('drilled');
    store = await started;
    writeFileSync(join(scratch, 'secret'), store.secretAccessKey);
    await admin(server.dataDir, ['set-backup-destination', '--team', teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', join(scratch, 'secret'), '--allow-private']);
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: serverId, name: 'Drilled shop' });
    serviceId = created.service_id;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    const backedUp = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 300_000);
    expect(backedUp).toMatchObject({ state: 'succeeded' });
    backupId = backedUp.backup_id;
    await server.app.engine.offsite.tick();
    expect((await call('GET', `/api/backups/${backupId}`)).body).toMatchObject({ locations: [{ state: 'stored' }, { kind: 'offsite', state: 'stored' }], verified_at: null });
  }, 900_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    await store?.close();
    rmSync(scratch, { recursive: true, force: true });
  }, 180_000);

  it('admin run-restore-drill proves the newest off-site backup restores, leaving the service as it was and no throwaway behind', async () => {
    const before = await engineState();
    const ran = await admin(server.dataDir, ['run-restore-drill', '--team', teamId], undefined, NEWCOMER_ENV);
    const drill = ran.drills.find((each: { service_id: string }) => each.service_id === serviceId);
    expect(drill, JSON.stringify(ran)).toMatchObject({ backup_id: backupId, outcome: 'verified' });
    expect(drill.said).toMatch(/restored into a throwaway service, started and answered its health check; the throwaway was removed\.$/);
    // The seeded team's local services have no off-site backup: a sentence each, nothing run.
    expect(ran.drills.filter((each: { outcome: string }) => each.outcome === 'skipped').map((each: { said: string }) => each.said))
      .toEqual(expect.arrayContaining([expect.stringMatching(/no backup of it is stored off-site yet/)]));

    expect(await engineState()).toEqual(before);
    const backup = (await call('GET', `/api/backups/${backupId}`)).body;
    expect(backup.verified_at).toEqual(expect.any(String));
    expect(backup.verify_reason).toBeNull();
    expect(await drillEvents()).toEqual([
      { type: 'backup.verified', backup: { id: backupId, service_id: serviceId, kind: 'manual' }, drill: expect.objectContaining({ state: 'verified', reason: null }) },
    ]);
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running' });
    expect((await fetch(service.url)).status).toBe(200);
    // The throwaway's row went with it; nothing of the team lists it.
    expect((await call('GET', '/api/service-erp?limit=200')).body.data.map((each: { name: string }) => each.name)).not.toContain('Restore drill of Drilled shop');
    expect(await server.app.db.kysely.selectFrom('erp_services').select('id').where('name', 'like', 'Restore drill of%').execute()).toEqual([]);
  }, 600_000);

  it('a scheduled drill flags a backup whose object was changed in the store, with a sentence, and touches nothing of the service', async () => {
    const copy = await server.app.db.kysely.selectFrom('backup_offsite_copies').select('object_key').where('backup_id', '=', backupId).executeTakeFirstOrThrow();
    await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: copy.object_key, Body: randomBytes(64 * 1024) }));
    const provenAt = (await call('GET', `/api/backups/${backupId}`)).body.verified_at;
    const before = await engineState();

    // The scheduler's first look gives the team its weekly slot, a week from now; here made due now.
    expect((await server.app.engine.scheduler.tick()).drills).toEqual([]);
    const first = await server.app.db.kysely.selectFrom('team_restore_drills').select('next_run_at').where('team_id', '=', teamId).executeTakeFirstOrThrow();
    expect(Math.round((Date.parse(first.next_run_at) - Date.now()) / 3_600_000)).toBe(7 * 24);
    await server.app.db.kysely.updateTable('team_restore_drills').set({ next_run_at: new Date(Date.now() - 1000).toISOString() }).where('team_id', '=', teamId).execute();
    const tick = await server.app.engine.scheduler.tick();
    expect(tick.drills).toHaveLength(1);
    await server.app.engine.drills.tick();

    const backup = (await call('GET', `/api/backups/${backupId}`)).body;
    expect(backup.verify_reason).toMatch(/^The off-site copy could not be fetched \(the off-site copy does not open with the team's backup key: it was changed or damaged in the store\)\.$/);
    expect(backup.verified_at).toBe(provenAt);
    const failed = (await drillEvents()).at(-1);
    expect(failed).toMatchObject({ type: 'backup.verify_failed', backup: { id: backupId }, drill: { state: 'failed', reason: backup.verify_reason } });
    expect(await engineState()).toEqual(before);
    // The server's copy was not marked: it still reads.
    expect(backup.locations[0]).toEqual({ kind: 'server', state: 'stored', reason: null });
    const slot = await server.app.db.kysely.selectFrom('team_restore_drills').select('next_run_at').where('team_id', '=', teamId).executeTakeFirstOrThrow();
    expect(Date.parse(slot.next_run_at) - Date.now()).toBeGreaterThan(6 * 24 * 3_600_000);
  }, 600_000);
});
