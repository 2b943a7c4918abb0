// Crash safety on a Docker server, with the real compiled command and a real engine:
// `teaminfra serve` is killed with SIGKILL in the middle of a start, a redeploy, a backup and a
// restore, and started again on the same data. The operation must end (succeeded, or failed
// with a reason), the service's state must be what the engine runs, the service must never
// have two containers, and a backup that succeeded must stay downloadable, byte for byte.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import { startServe, type ServeProcess } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { act, fetchText, send, waitForOperation } from '../support/engine-http.js';
import { adminDockerTeam } from './support/docker-team.js';
import { markOf, markVolume } from './support/volume-mark.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi, volumesOfServer } from './support/docker-engine.js';

describe.runIf(dockerAvailable)('teaminfra serve killed in the middle of an operation on a Docker server', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let db: SqliteDb;
  let token: string;
  let serverId: string;
  let serviceId: string;
  /** Backups that succeeded, with the SHA-256 they were recorded with: none may be lost. */
  const completedBackups = new Map<string, string>();

  const serviceContainers = async () => (await containersOfServer(api, serverId, 'service'))
    .filter((container) => container.Labels['io.teaminfra.service-id'] === serviceId);
  const helperContainers = async () => (await containersOfServer(api, serverId, 'helper'))
    .filter((container) => container.Labels['io.teaminfra.service-id'] === serviceId);
  const operationState = (id: string) => (db.sqlite.prepare('SELECT state FROM operations WHERE id = ?').get(id) as { state: string }).state;

  beforeAll(async () => {
    ({ serverId, token } = await adminDockerTeam(dataDir, 'Crash team'));
    db = openDatabase(dataDir);
    serve = await startServe(dataDir, [], { TEAMINFRA_START_TIMEOUT_MS: '20000' });
    const created = await act(serve.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Crash ERP' });
    expect(created.state).toBe('succeeded');
    serviceId = created.service_id as string;
  }, 300_000);
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends the action and kills serve with SIGKILL once `reached` says the operation is where the test wants it. */
  async function killDuring(method: string, path: string, reached: (operationId: string) => Promise<boolean>): Promise<string> {
    const accepted = await send((serve as ServeProcess).baseUrl, method, path, token);
    expect(accepted.status).toBe(202);
    const operationId = accepted.body.id as string;
    const deadline = Date.now() + 20_000;
    while (!(operationState(operationId) === 'running' && await reached(operationId)) && Date.now() < deadline) await sleep(2);
    expect(await serve?.stop('SIGKILL')).toBeNull();
    // The point of the test: the operation was in the middle of running when its worker died.
    expect(operationState(operationId)).toBe('running');
    return operationId;
  }

  /** After a restart: the operation ended, nothing of the service is left queued or running, and its state is what the engine runs. */
  async function expectRecovered(operationId: string) {
    serve = await startServe(dataDir, [], { TEAMINFRA_START_TIMEOUT_MS: '20000' });
    const operation = await waitForOperation(serve.baseUrl, token, operationId, 120_000);
    if (operation.state === 'failed') expect(operation.reason).toMatch(/\w{10,}/);
    const unfinished = db.sqlite.prepare("SELECT count(*) AS count FROM operations WHERE service_id = ? AND state IN ('queued', 'running')").get(serviceId) as { count: number };
    expect(unfinished.count).toBe(0);

    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    const containers = await serviceContainers();
    // Never two containers of one service, whatever it was doing.
    expect(containers.length).toBeLessThanOrEqual(1);
    const running = containers.filter((container) => container.State === 'running');
    if (service.state === 'running') {
      expect(running).toHaveLength(1);
      expect(running[0]?.Labels['io.teaminfra.revision']).toBe(String(service.revision));
      const home = await fetchText(service.url);
      expect(home.status).toBe(200);
      expect(home.text).toContain(`data-revision="${service.revision}"`);
    } else {
      expect(running).toHaveLength(0);
    }
    return { operation, service };
  }

  /** Every backup that ever succeeded downloads with the bytes it was recorded with. */
  async function expectNoBackupLost() {
    for (const [backupId, sha256] of completedBackups) {
      const response = await fetch(`${(serve as ServeProcess).baseUrl}/api/backups/${backupId}/download`, { headers: { Authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      expect(createHash('sha256').update(Buffer.from(await response.arrayBuffer())).digest('hex')).toBe(sha256);
    }
  }

  async function rememberBackup(backupId: string) {
    const backup = (await send((serve as ServeProcess).baseUrl, 'GET', `/api/backups/${backupId}`, token)).body;
    if (backup.state === 'completed') completedBackups.set(backupId, backup.sha256 as string);
    return backup;
  }

  it('finishes a start interrupted after its container was created, with one container', async () => {
    const operationId = await killDuring('POST', `/api/service-erp/${serviceId}/start`, async () => (await serviceContainers()).length > 0);
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state).toBe('succeeded');
    expect(service).toMatchObject({ state: 'running', revision: 1 });
  });

  it('finishes a redeploy interrupted once the new revision\'s container exists, serving the new revision from one container', async () => {
    const operationId = await killDuring('POST', `/api/service-erp/${serviceId}/redeploy`,
      async () => (await serviceContainers()).some((container) => container.Labels['io.teaminfra.revision'] === '2'));
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state).toBe('succeeded');
    expect(service).toMatchObject({ state: 'running', revision: 2 });
  });

  it('ends a backup interrupted while its snapshot was being taken: completed and downloadable, or failed with a reason', async () => {
    const before = await act((serve as ServeProcess).baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(before.state).toBe('succeeded');
    await rememberBackup(before.backup_id as string);
    const operationId = await killDuring('POST', `/api/service-erp/${serviceId}/backups`, async () => (await helperContainers()).length > 0);
    const { operation, service } = await expectRecovered(operationId);
    expect(service.state).toBe('running');
    const backup = await rememberBackup(operation.backup_id as string);
    expect(backup.state).toBe(operation.state === 'succeeded' ? 'completed' : 'failed');
    await expectNoBackupLost();
    // The helper the killed backup was using is gone once the backup has ended.
    expect(await helperContainers()).toEqual([]);
  });

  it('ends a restore interrupted after its data was staged: the service runs on one of the two data sets, from one container and one volume', async () => {
    const [backupId] = [...completedBackups.keys()];
    const operationId = await killDuring('POST', `/api/backups/${backupId}/restore`,
      async () => (await volumesOfServer(api, serverId)).some((volume) => volume.Labels['io.teaminfra.service-id'] === serviceId && /-g\d+$/.test(volume.Name)));
    const { operation, service } = await expectRecovered(operationId);
    expect(service.state).toBe('running');
    if (operation.state === 'succeeded') {
      const safety = operation.result?.safety_backup_id as string | undefined;
      if (safety) await rememberBackup(safety);
    }
    await expectNoBackupLost();
    const current = db.sqlite.prepare('SELECT volume FROM docker_services WHERE service_id = ?').get(serviceId) as { volume: string };
    const volumes = (await volumesOfServer(api, serverId)).filter((volume) => volume.Labels['io.teaminfra.service-id'] === serviceId && volume.Labels['io.teaminfra.role'] === 'data');
    expect(volumes.map((volume) => volume.Name)).toEqual([current.volume]);
    expect((await serviceContainers())[0]?.Labels['io.teaminfra.volume']).toBe(current.volume);
    expect(await helperContainers()).toEqual([]);
  });

  it('resumes a restore interrupted after its safety backup from there: no second staging, one safety backup, running on the staged data', async () => {
    const [backupId] = [...completedBackups.keys()];
    const safetyState = (operationId: string) => (db.sqlite.prepare("SELECT state FROM backups WHERE operation_id = ? AND kind = 'safety'")
      .get(operationId) as { state: string } | undefined)?.state;
    const dataVolumes = async () => (await volumesOfServer(api, serverId))
      .filter((volume) => volume.Labels['io.teaminfra.service-id'] === serviceId && volume.Labels['io.teaminfra.role'] === 'data');
    const operationId = await killDuring('POST', `/api/backups/${backupId}/restore`, async (id) => safetyState(id) === 'completed');
    // The data the killed attempt staged (the newest generation), marked: a volume staged again would not have the mark.
    const generation = (name: string) => Number(/-g(\d+)$/.exec(name)?.[1] ?? 0);
    const staged = (await dataVolumes()).map((volume) => volume.Name).sort((a, b) => generation(b) - generation(a))[0] as string;
    const { image } = db.sqlite.prepare('SELECT image FROM docker_servers WHERE server_id = ?').get(serverId) as { image: string };
    const marked = { api, image, serverId, volume: staged };
    await markVolume(marked, operationId);
    const { operation, service } = await expectRecovered(operationId);
    expect(operation.state, JSON.stringify(operation)).toBe('succeeded');
    expect(service.state).toBe('running');
    const safeties = db.sqlite.prepare("SELECT id FROM backups WHERE operation_id = ? AND kind = 'safety'").all(operationId) as { id: string }[];
    expect(safeties).toHaveLength(1);
    expect(operation.result).toEqual({ safety_backup_id: safeties[0]?.id });
    await rememberBackup(safeties[0]?.id as string);
    // The service runs on the very volume staged before the kill, not on one staged again.
    const current = db.sqlite.prepare('SELECT volume FROM docker_services WHERE service_id = ?').get(serviceId) as { volume: string };
    expect(current.volume).toBe(staged);
    expect(await markOf(marked)).toBe(operationId);
    expect((await dataVolumes()).map((volume) => volume.Name)).toEqual([staged]);
    await expectNoBackupLost();
  });

  it('ends a restore interrupted during its safety backup, and the service still answers', async () => {
    const [backupId] = [...completedBackups.keys()];
    const operationId = await killDuring('POST', `/api/backups/${backupId}/restore`, async () => {
      const safety = db.sqlite.prepare("SELECT count(*) AS count FROM backups WHERE service_id = ? AND kind = 'safety' AND state = 'pending'").get(serviceId) as { count: number };
      return safety.count > 0;
    });
    const { service } = await expectRecovered(operationId);
    expect(service.state).toBe('running');
    const pending = db.sqlite.prepare("SELECT count(*) AS count FROM backups WHERE service_id = ? AND state = 'pending'").get(serviceId) as { count: number };
    expect(pending.count).toBe(0);
    await expectNoBackupLost();
  });
});
