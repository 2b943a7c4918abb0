// move_erp_service and rollback_erp_service_move between two real Docker engines (the second
// a dockerd of its own, standing in for another machine; the Tryton images copied to it offline,
// as a registry would bring them): a Tryton service keeps its data and its admin's password on
// its new server, serves while its data is copied, and says its write pause; a backup taken
// before the move restores into it there, and its new backups are kept there; its old server
// keeps the stopped service for the rollback window (the default one: no TEAMINFRA_* setting);
// a rollback brings back its current data; a move whose target cannot start it leaves it
// running on its old server, untouched, with nothing of it on the target; once a (short) window
// ended, the server it left no longer holds anything of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppImages } from '../../../src/engine/apps/images/build-app-images.js';
import { admin } from '../../support/cli.js';
import type { TestServer } from '../../support/fixtures.js';
import { waitForOperation } from '../support/engine-http.js';
import { copyImages } from '../../offsite/support/copied-images.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from './support/docker-engine.js';
import { derivedImage, startDockerTeam } from './support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from './support/second-engine.js';
import { engineObjectsOf, teamCalls } from './support/team-calls.js';
import { createParty, partyNames, startedTryton, tryton, TRYTON_START_MS, trytonSession } from './support/tryton-app.js';

const BROKEN_IMAGE = 'teaminfra-move-test:broken';

describe.runIf(dockerAvailable && secondEngineStartable)('move_erp_service between two engines', () => {
  const api = testDockerApi();
  let second: SecondEngine;
  let server: TestServer;
  let token: string;
  let teamId: string;
  let here: string;
  let there: string;
  let serviceId: string;
  let password: string;
  let bundled: string;
  let backupBefore: string;
  const servers: string[] = [];
  const { call, actAndWait } = teamCalls(() => server.baseUrl, () => token);
  const serverOn = async (name: string, host: string, image?: string) => {
    const id = (await admin(server.dataDir, ['create-server', '--team', teamId, '--name', name, '--docker-host', host, ...(image ? ['--image', image] : [])])).id as string;
    servers.push(id);
    return id;
  };

  beforeAll(async () => {
    await buildAppImages(api, tryton, () => undefined);
    second = await startSecondEngine();
    await copyImages(api, second.api, tryton.containers.map((container) => container.image));
    const docker = await startDockerTeam();
    ({ server, token, teamId, image: bundled } = docker);
    here = await docker.addServer('here');
    servers.push(here);
    there = await serverOn('there', second.host);
    let url: string;
    ({ serviceId, password, url } = await startedTryton({ call, actAndWait }, (id) => waitForOperation(server.baseUrl, token, id, 120_000), here));
    await createParty(url, await trytonSession(url, 'admin', password), 'Before the move');
    const backedUp = await actAndWait('POST', `/api/service-erp/${serviceId}/backups`, 15 * 60_000);
    expect(backedUp).toMatchObject({ state: 'succeeded' });
    backupBefore = backedUp.backup_id as string;
  }, TRYTON_START_MS + 25 * 60_000);

  afterAll(async () => {
    await server?.close();
    for (const id of servers) await removeEverythingOf(api, id).catch(() => undefined);
    await api.json('DELETE', `/images/${encodeURIComponent(BROKEN_IMAGE)}`, { query: { force: 1 }, accept: [404] }).catch(() => undefined);
    await second?.stop();
    await api.close();
  }, 180_000);

  it('moves a Tryton service with its data and admin password while it serves, reporting its write pause', async () => {
    const before = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    const session = await trytonSession(before.url, 'admin', password);
    const accepted = await call('POST', `/api/service-erp/${serviceId}/move`, { server_id: there });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    // A client reads the service while its data is copied.
    let readWhileMoving = 0;
    let operation = accepted.body;
    const deadline = Date.now() + TRYTON_START_MS;
    while (operation.state === 'queued' || operation.state === 'running') {
      if (operation.state === 'running' && await partyNames(before.url, session).then(() => true, () => false)) readWhileMoving += 1;
      if (Date.now() > deadline) throw new Error('the move did not end in time');
      await new Promise((resolve) => setTimeout(resolve, 300));
      operation = (await call('GET', `/api/operations/${accepted.body.id}`)).body;
    }
    expect(operation, JSON.stringify(operation)).toMatchObject({ state: 'succeeded', kind: 'move', server_id: there });
    expect(readWhileMoving).toBeGreaterThan(0);
    const { write_pause_ms: pause, rollback_until: until } = operation.result;
    expect(pause).toBeGreaterThan(0);
    expect(pause).toBeLessThan(Date.parse(operation.finished_at) - Date.parse(operation.started_at));
    // The default window: 24 hours from the switch.
    expect(Math.abs(Date.parse(until) - (Date.parse(operation.finished_at) + 24 * 3_600_000))).toBeLessThan(60_000);
    const steps = (operation.steps as { step: string }[]).map((step) => step.step);
    expect(steps.filter((step) => step === 'Copied the data to the other server')).toHaveLength(2);

    const moved = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(moved).toMatchObject({ state: 'running', server_id: there });
    expect(await partyNames(moved.url, await trytonSession(moved.url, 'admin', password))).toEqual(['Before the move']);
    // The old server keeps the stopped service and its data; nothing of it runs there.
    const left = await engineObjectsOf(api, serviceId);
    expect(left.volumes.length).toBeGreaterThan(0);
    const running = await api.json<unknown[]>('GET', '/containers/json', { query: { filters: JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`] }) } });
    expect(running).toEqual([]);
  }, TRYTON_START_MS + 60_000);

  it('restores a backup taken before the move (kept by the server it left) into the service on its new server, and backs it up there', async () => {
    const restored = await actAndWait('POST', `/api/backups/${backupBefore}/restore`, TRYTON_START_MS);
    expect(restored, JSON.stringify(restored)).toMatchObject({ state: 'succeeded', result: { safety_backup_id: expect.any(String) } });
    const service = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(service).toMatchObject({ state: 'running', server_id: there });
    expect(await partyNames(service.url, await trytonSession(service.url, 'admin', password))).toEqual(['Before the move']);
    const pathOf = async (id: string) => (await server.app.db.kysely.selectFrom('backups').select('file_path').where('id', '=', id).executeTakeFirstOrThrow()).file_path;
    expect(await pathOf(backupBefore)).toMatch(new RegExp(`^docker://${here}/`));
    // Its backups are now taken, and kept, on its new server.
    expect(await pathOf(restored.result.safety_backup_id)).toMatch(new RegExp(`^docker://${there}/`));
  }, TRYTON_START_MS + 60_000);

  it('rolls back with the data written since the move, leaving nothing on the server it left', async () => {
    const moved = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    await createParty(moved.url, await trytonSession(moved.url, 'admin', password), 'After the move');
    const done = await actAndWait('POST', `/api/service-erp/${serviceId}/move/rollback`, TRYTON_START_MS);
    expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', server_id: here, result: { write_pause_ms: expect.any(Number) } });
    const back = (await call('GET', `/api/service-erp/${serviceId}`)).body;
    expect(back).toMatchObject({ state: 'running', server_id: here });
    expect(await partyNames(back.url, await trytonSession(back.url, 'admin', password))).toEqual(['After the move', 'Before the move']);
    expect(await engineObjectsOf(second.api, serviceId)).toEqual({ containers: [], volumes: [], networks: [] });
    const again = await call('POST', `/api/service-erp/${serviceId}/move/rollback`);
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/has no move to roll back/);
  }, TRYTON_START_MS + 60_000);

  it('leaves the service running on its old server, untouched, when it does not start on the target', async () => {
    // The same image name on both engines, but the second one's never answers its health check.
    await derivedImage(api, bundled, BROKEN_IMAGE, []);
    await copyImages(api, second.api, [BROKEN_IMAGE]);
    await derivedImage(second.api, BROKEN_IMAGE, BROKEN_IMAGE, ['CMD ["node", "-e", "setInterval(() => {}, 1000)"]']);
    const from = await serverOn('demo-here', TEST_DOCKER_HOST, BROKEN_IMAGE);
    const to = await serverOn('demo-there', second.host, BROKEN_IMAGE);
    const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: from, name: 'Demo' });
    const demoId = created.service_id as string;
    expect(await actAndWait('POST', `/api/service-erp/${demoId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
    const before = (await call('GET', `/api/service-erp/${demoId}`)).body;

    const failed = await actAndWait('POST', `/api/service-erp/${demoId}/move`, 300_000, { server_id: to });
    expect(failed, JSON.stringify(failed)).toMatchObject({ state: 'failed' });
    const after = (await call('GET', `/api/service-erp/${demoId}`)).body;
    expect(after).toMatchObject({ state: 'running', server_id: from, url: before.url });
    expect((await fetch(after.url, { signal: AbortSignal.timeout(10_000) })).status).toBeLessThan(500);
    expect(await engineObjectsOf(second.api, demoId)).toEqual({ containers: [], volumes: [], networks: [] });
  }, 600_000);

  it('removes the stopped service and its data from the server it left once a short rollback window ended', async () => {
    const previous = process.env.TEAMINFRA_MOVE_ROLLBACK_HOURS;
    process.env.TEAMINFRA_MOVE_ROLLBACK_HOURS = '0.001';
    try {
      await copyImages(api, second.api, [bundled]);
      const to = await serverOn('window-there', second.host, bundled);
      const created = await actAndWait('POST', '/api/service-erp', 120_000, { server_id: here, name: 'Short window' });
      const demoId = created.service_id as string;
      expect(await actAndWait('POST', `/api/service-erp/${demoId}/start`, 120_000)).toMatchObject({ state: 'succeeded' });
      const done = await actAndWait('POST', `/api/service-erp/${demoId}/move`, 300_000, { server_id: to });
      expect(done, JSON.stringify(done)).toMatchObject({ state: 'succeeded', result: { write_pause_ms: expect.any(Number) } });
      expect((await engineObjectsOf(api, demoId)).volumes.length).toBeGreaterThan(0);
      // 3.6 seconds from the switch.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(done.result.rollback_until) - Date.now()) + 200));
      await server.app.engine.sweepMoves();
      expect(await engineObjectsOf(api, demoId)).toEqual({ containers: [], volumes: [], networks: [] });
      const service = (await call('GET', `/api/service-erp/${demoId}`)).body;
      expect(service).toMatchObject({ state: 'running', server_id: to });
      expect((await fetch(service.url, { signal: AbortSignal.timeout(10_000) })).status).toBeLessThan(500);
      const refused = await call('POST', `/api/service-erp/${demoId}/move/rollback`);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/^The service has no move to roll back/);
    } finally {
      if (previous === undefined) delete process.env.TEAMINFRA_MOVE_ROLLBACK_HOURS;
      else process.env.TEAMINFRA_MOVE_ROLLBACK_HOURS = previous;
    }
  }, 600_000);
});
