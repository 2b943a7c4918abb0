// Crash safety of a Tryton service's data, with the real compiled command and a real engine:
// `teaminfra serve` is killed with SIGKILL in the middle of a backup, a restore and a copy of the
// service, and started again on the same data. The operation must end (succeeded, or failed with
// a reason), nothing of its one-off containers or staging must be left on the engine, and the
// data must be whole: the parties Tryton answers are one of the two data sets, never a mix.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { startServe, type ServeProcess } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { send } from '../support/engine-http.js';
import { containersOfServer, dockerAvailable, networksOfServer, removeEverythingOf, testDockerApi, volumesOfServer } from './support/docker-engine.js';
import { adminDockerTeam } from './support/docker-team.js';
import { markOf, markVolume } from './support/volume-mark.js';
import { createParty, partyNames, rpc, tryton, TRYTON_START_MS, trytonSession, waitForLongOperation } from './support/tryton-app.js';

const SERVE_ENV = { TEAMINFRA_START_TIMEOUT_MS: '20000' };

describe.runIf(dockerAvailable)('teaminfra serve killed in the middle of a backup, a restore and a copy of a Tryton service', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let db: SqliteDb;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let password: string;
  let backupId: string;

  const baseUrl = () => (serve as ServeProcess).baseUrl;
  const ofService = (id: string) => (labels: Record<string, string>) => labels['io.teaminfra.service-id'] === id;
  const helpersOf = async (id: string) => (await containersOfServer(api, serverId, 'helper')).filter((each) => ofService(id)(each.Labels));
  const operationState = (id: string) => (db.sqlite.prepare('SELECT state FROM operations WHERE id = ?').get(id) as { state: string }).state;
  const actAndWait = async (method: string, path: string, timeoutMs: number, body?: object) => {
    const accepted = await send(baseUrl(), method, path, token, body);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    return waitForLongOperation(baseUrl(), token, accepted.body.id, timeoutMs);
  };
  const partiesOf = async (id: string) => {
    const url = (await send(baseUrl(), 'GET', `/api/service-erp/${id}`, token)).body.url as string;
    return partyNames(url, await trytonSession(url, 'admin', password));
  };

  beforeAll(async () => {
    await buildAppImages(api, tryton, () => undefined);
    ({ serverId, token } = await adminDockerTeam(dataDir, 'Crash team'));
    db = openDatabase(dataDir);
    serve = await startServe(dataDir, [], SERVE_ENV);
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: serverId, name: 'Crash Tryton', app: 'tryton' });
    expect(created.state).toBe('succeeded');
    serviceId = created.service_id;
    password = created.result.initial_credentials.password;
    expect(await actAndWait('POST', `/api/service-erp/${serviceId}/start`, TRYTON_START_MS)).toMatchObject({ state: 'succeeded' });
    const url = (await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body.url;
    await createParty(url, await trytonSession(url, 'admin', password), 'Acme Hosting');
  }, TRYTON_START_MS + 10 * 60_000);

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  /** Sends the action and kills serve with SIGKILL once `reached` says the operation is where the test wants it. */
  async function killDuring(method: string, path: string, reached: (accepted: { id: string; service_id: string }) => Promise<boolean>): Promise<{ id: string; service_id: string }> {
    const accepted = await send(baseUrl(), method, path, token, {});
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const deadline = Date.now() + 120_000;
    while (!(operationState(accepted.body.id) === 'running' && await reached(accepted.body)) && Date.now() < deadline) await sleep(5);
    expect(await serve?.stop('SIGKILL')).toBeNull();
    expect(operationState(accepted.body.id)).toBe('running');
    return accepted.body;
  }

  /** serve again: the operation ends, with a reason if it failed; nothing of the service is left queued or running, nor any one-off container. */
  async function expectRecovered(operationId: string, ids: string[]) {
    serve = await startServe(dataDir, [], SERVE_ENV);
    const operation = await waitForLongOperation(baseUrl(), token, operationId, TRYTON_START_MS);
    if (operation.state === 'failed') expect(operation.reason).toMatch(/\w{10,}/);
    for (const id of ids) {
      const unfinished = db.sqlite.prepare("SELECT count(*) AS count FROM operations WHERE service_id = ? AND state IN ('queued', 'running')").get(id) as { count: number };
      expect(unfinished.count).toBe(0);
      expect(await helpersOf(id)).toEqual([]);
      // No staging network of a restore or copy is left: the service's own network, and its front's once it started.
      const networks = (await networksOfServer(api, serverId)).filter((each) => ofService(id)(each.Labels)).map((each) => each.Name);
      expect(networks.filter((name) => name !== `teaminfra-front-${id}`)).toEqual([`teaminfra-net-${id}`]);
    }
    return operation;
  }

  it('ends a backup interrupted while its dump was being taken: completed and downloadable whole, or failed with a reason', async () => {
    const { id } = await killDuring('POST', `/api/service-erp/${serviceId}/backups`, async () => (await helpersOf(serviceId)).length > 0);
    const operation = await expectRecovered(id, [serviceId]);
    expect(operation.state, JSON.stringify(operation)).toBe('succeeded');
    const backup = (await send(baseUrl(), 'GET', `/api/backups/${operation.backup_id}`, token)).body;
    expect(backup.state).toBe('completed');
    const response = await fetch(`${baseUrl()}/api/backups/${operation.backup_id}/download`, { headers: { Authorization: `Bearer ${token}` } });
    expect(createHash('sha256').update(Buffer.from(await response.arrayBuffer())).digest('hex')).toBe(backup.sha256);
    backupId = operation.backup_id;
    expect((await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
    expect(await partiesOf(serviceId)).toEqual(['Acme Hosting']);
  }, TRYTON_START_MS + 5 * 60_000);

  it('ends a restore interrupted while its staged database was being filled: the service runs on one whole data set, from one generation of volumes', async () => {
    const url = (await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body.url;
    await createParty(url, await trytonSession(url, 'admin', password), 'Added after the backup');
    const { id } = await killDuring('POST', `/api/backups/${backupId}/restore`, async () => (await helpersOf(serviceId)).some((each) => each.Names.some((name) => name.includes('-staged-'))));
    const operation = await expectRecovered(id, [serviceId]);
    const service = (await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body;
    expect(service.state).toBe('running');
    expect(await partiesOf(serviceId)).toEqual(operation.state === 'succeeded' ? ['Acme Hosting'] : ['Acme Hosting', 'Added after the backup']);
    const generation = (db.sqlite.prepare('SELECT volume FROM docker_services WHERE service_id = ?').get(serviceId) as { volume: string }).volume.match(/-g(\d+)$/)?.[1];
    const suffix = generation ? `-g${generation}` : '';
    const volumes = (await volumesOfServer(api, serverId)).filter((each) => ofService(serviceId)(each.Labels)).map((each) => each.Name).sort();
    expect(volumes).toEqual([`teaminfra-data-${serviceId}-database${suffix}`, `teaminfra-data-${serviceId}-files${suffix}`]);
  }, 2 * TRYTON_START_MS + 5 * 60_000);

  it('resumes a restore interrupted once its safety backup was taken from there: one safety backup, the staged data kept, the backup\'s data', async () => {
    const url = (await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body.url;
    await createParty(url, await trytonSession(url, 'admin', password), 'Added before the second restore');
    const safetyState = (operationId: string) => (db.sqlite.prepare("SELECT state FROM backups WHERE operation_id = ? AND kind = 'safety'")
      .get(operationId) as { state: string } | undefined)?.state;
    const { id } = await killDuring('POST', `/api/backups/${backupId}/restore`, async (body) => safetyState(body.id) === 'completed');
    // The database the killed attempt staged (the newest generation), marked: one staged again would not have the mark.
    const generation = (name: string) => Number(/-g(\d+)$/.exec(name)?.[1] ?? 0);
    const databases = (await volumesOfServer(api, serverId)).map((each) => each.Name).filter((name) => name.startsWith(`teaminfra-data-${serviceId}-database`));
    const staged = databases.sort((a, b) => generation(b) - generation(a))[0] as string;
    const marked = { api, image: tryton.containers[0]!.image, serverId, volume: staged };
    await markVolume(marked, id);
    const operation = await expectRecovered(id, [serviceId]);
    expect(operation.state, JSON.stringify(operation)).toBe('succeeded');
    expect((await send(baseUrl(), 'GET', `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
    expect(await partiesOf(serviceId)).toEqual(['Acme Hosting']);
    const safeties = db.sqlite.prepare("SELECT id, state FROM backups WHERE operation_id = ? AND kind = 'safety'").all(id);
    expect(safeties).toEqual([{ id: operation.result.safety_backup_id, state: 'completed' }]);
    const current = (db.sqlite.prepare('SELECT volume FROM docker_services WHERE service_id = ?').get(serviceId) as { volume: string }).volume;
    expect(`${current.replace(/-g\d+$/, '')}-database-g${generation(current)}`).toBe(staged);
    expect(await markOf(marked)).toBe(id);
  }, 2 * TRYTON_START_MS + 5 * 60_000);

  it('ends a copy interrupted while its data was being loaded: a copy with the parent\'s data and its jobs off, or a failure with a reason', async () => {
    let copyId = '';
    const accepted = await killDuring('POST', `/api/service-erp/${serviceId}/copies`, async (body) => {
      copyId = body.service_id;
      return (await helpersOf(copyId)).some((each) => each.Names.some((name) => name.includes('-staged-')));
    });
    const operation = await expectRecovered(accepted.id, [copyId, serviceId]);
    expect(operation.state, JSON.stringify(operation)).toBe('succeeded');
    expect(await actAndWait('POST', `/api/service-erp/${copyId}/start`, TRYTON_START_MS)).toMatchObject({ state: 'succeeded' });
    expect(await partiesOf(copyId)).toEqual(await partiesOf(serviceId));
    const url = (await send(baseUrl(), 'GET', `/api/service-erp/${copyId}`, token)).body.url;
    const active = await rpc(url, 'model.ir.cron.search_count', [[['active', '=', true]], {}], await trytonSession(url, 'admin', password));
    expect(active.result).toBe(0);
  }, 3 * TRYTON_START_MS);
});
