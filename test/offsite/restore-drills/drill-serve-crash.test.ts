// `teaminfra serve` killed with SIGKILL in the middle of a restore drill (its throwaway service's
// containers running on the test Docker engine), with the real compiled command and a real
// S3-compatible store (Ceph's radosgw): the next start takes the drill at once (its holder is
// gone), removes what the killed attempt left of its throwaway, runs it again to the end, and
// leaves nothing of any throwaway on the engine; the service's own containers are untouched.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../src/db/connect.js';
import { nowIso } from '../../../src/db/ids.js';
import { queueDrillsOfTeam } from '../../../src/db/repositories/restore-drills.js';
import { LABEL, labelFilter } from '../../../src/engine/docker/labels.js';
import { admin, startServe, type ServeProcess } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { act } from '../../engine/support/engine-http.js';
import { adminDockerTeam } from '../../engine/docker/support/docker-team.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from '../../engine/docker/support/docker-engine.js';
import { objectStoreInstalled, startObjectStore, type TestObjectStore } from '../support/object-store-server.js';

describe.runIf(dockerAvailable && objectStoreInstalled && process.platform === 'linux')('teaminfra serve killed in the middle of a restore drill', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  const scratch = mkdtempSync(join(tmpdir(), 'drill-crash-'));
  let store: TestObjectStore;
  let serve: ServeProcess | undefined;
  let db: Db;
  let teamId: string;
  let serverId: string;
  let serviceId: string;
  let backupId: string;
  const env = { TEAMINFRA_START_TIMEOUT_MS: '20000' };

  const objectsOf = async (id: string) => {
    const filters = labelFilter({ [LABEL.serviceId]: id });
    const containers = await api.json<{ Id: string; State: string }[]>('GET', '/containers/json', { query: { all: 1, filters } });
    const volumes = (await api.json<{ Volumes: { Name: string }[] | null }>('GET', '/volumes', { query: { filters } })).Volumes ?? [];
    const networks = await api.json<{ Name: string }[]>('GET', '/networks', { query: { filters } });
    return { containers: containers.map((each) => `${each.Id} ${each.State}`).sort(), volumes: volumes.map((each) => each.Name).sort(), networks: networks.map((each) => each.Name).sort() };
  };
  const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms:\n${serve?.output() ?? ''}`);
      await sleep(100);
    }
  };

  beforeAll(async () => {
    const started = startObjectStore();
    let token: string;
    ({ teamId, serverId, token } = await adminDockerTeam(dataDir, 'Drill crash team'));
    store = await started;
    writeFileSync(join(scratch, 'secret'), store.secretAccessKey);
    await admin(dataDir, ['set-backup-destination', '--team', teamId, '--endpoint', store.endpoint, '--region', store.region,
      '--bucket', store.bucket, '--access-key-id', store.accessKeyId, '--secret-access-key-file', join(scratch, 'secret'), '--allow-private']);
    db = openDatabase(dataDir);
    serve = await startServe(dataDir, [], env);
    serviceId = (await act(serve.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Drilled ERP' })).service_id;
    expect(await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    backupId = (await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`)).backup_id;
    await until('the off-site copy to be stored', async () =>
      (await db.kysely.selectFrom('backup_offsite_copies').select('state').where('backup_id', '=', backupId).executeTakeFirst())?.state === 'stored', 120_000);
    await serve.stop('SIGTERM');
    serve = undefined;
  }, 600_000);
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it('removes the killed attempt\'s throwaway at the next start and proves the backup, leaving the service untouched', async () => {
    // As the scheduler queues a team's drills at its weekly slot.
    const [queued] = await queueDrillsOfTeam(db.kysely, teamId, nowIso());
    const drill = queued!.drill!;
    expect(drill).toMatchObject({ service_id: serviceId, backup_id: backupId, state: 'queued' });
    serve = await startServe(dataDir, [], env);
    const own = await objectsOf(serviceId);
    expect(own.containers.length).toBeGreaterThan(0);

    // Killed once the throwaway's containers run: the drill is in its restore's start.
    await until('the throwaway to run', async () => (await objectsOf(drill.throwaway_id)).containers.some((each) => each.endsWith('running')), 180_000);
    expect(await serve.stop('SIGKILL')).toBeNull();
    serve = undefined;
    const killed = await db.kysely.selectFrom('restore_drills').selectAll().where('id', '=', drill.id).executeTakeFirstOrThrow();
    expect(killed).toMatchObject({ state: 'running', attempts: 1 });
    expect(killed.lease_owner).not.toBeNull();
    expect((await objectsOf(drill.throwaway_id)).containers).not.toEqual([]);

    serve = await startServe(dataDir, [], env);
    await until('the drill to end', async () =>
      ['verified', 'failed'].includes((await db.kysely.selectFrom('restore_drills').select('state').where('id', '=', drill.id).executeTakeFirstOrThrow()).state), 240_000);
    expect(await db.kysely.selectFrom('restore_drills').select(['state', 'reason', 'attempts']).where('id', '=', drill.id).executeTakeFirstOrThrow())
      .toEqual({ state: 'verified', reason: null, attempts: 2 });
    expect(await objectsOf(drill.throwaway_id)).toEqual({ containers: [], volumes: [], networks: [] });
    expect(await db.kysely.selectFrom('erp_services').select('id').where('id', '=', drill.throwaway_id).execute()).toEqual([]);
    expect(await objectsOf(serviceId)).toEqual(own);
    expect((await db.kysely.selectFrom('backups').select('verified_at').where('id', '=', backupId).executeTakeFirstOrThrow()).verified_at).not.toBeNull();
  }, 600_000);
});
