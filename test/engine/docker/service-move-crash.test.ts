// Crash safety of move_erp_service with the real compiled command and two real engines (the
// second a dockerd of its own, the bundled image copied to it offline): `teaminfra serve` is
// killed with SIGKILL at each step of a move (the copy while the service serves, the stop, the
// final copy, the start on the new server, right after the switch) and started again on the same
// data. The move must end (moved) or be undone (on its old server, failed with a reason), never
// both: the service runs on exactly one server, the one its row says, from the data it had (a
// database of a few megabytes, compared by digest), and answers at its url.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../../src/db/connect.js';
import type { DockerApi } from '../../../src/engine/docker/docker-api.js';
import { admin, startServe, type ServeProcess } from '../../support/cli.js';
import { tempDataDir } from '../../support/fixtures.js';
import { copyImages } from '../../offsite/support/copied-images.js';
import { act, fetchText, send, waitForOperation } from '../support/engine-http.js';
import { containersOfServer, dockerAvailable, removeEverythingOf, testDockerApi, volumesOfServer } from './support/docker-engine.js';
import { adminDockerTeam } from './support/docker-team.js';
import { secondEngineStartable, startSecondEngine, type SecondEngine } from './support/second-engine.js';
import { growServiceDatabase, productsDigest } from './support/service-volume.js';

// The test polls its operations often; the default budget (600 a minute) is a client's, not this test's.
const SERVE_ENV = { TEAMINFRA_START_TIMEOUT_MS: '30000', TEAMINFRA_RATE_LIMIT: '100000/60' };

describe.runIf(dockerAvailable && secondEngineStartable)('teaminfra serve killed at each step of move_erp_service', () => {
  const api = testDockerApi();
  const dataDir = tempDataDir();
  let second: SecondEngine;
  let serve: ServeProcess | undefined;
  let db: SqliteDb;
  let token: string;
  let image: string;
  let here: string;
  let there: string;
  let serviceId: string;
  /** The service's data before any move: every move ends with exactly this data where it runs. */
  let digest: { count: number; sha256: string };

  const engineOf = (serverId: string): DockerApi => (serverId === here ? api : second.api);
  const otherThan = (serverId: string) => (serverId === here ? there : here);
  const serverIdNow = () => (db.sqlite.prepare('SELECT server_id FROM erp_services WHERE id = ?').get(serviceId) as { server_id: string }).server_id;
  const operationOf = (id: string) => db.sqlite.prepare('SELECT state, steps FROM operations WHERE id = ?').get(id) as { state: string; steps: string | null };
  /** The steps the operation has saved so far, by name. */
  const stepsOf = (id: string): string[] => (JSON.parse(operationOf(id).steps ?? '[]') as { step: string }[]).map((each) => each.step);
  const count = (steps: string[], step: string) => steps.filter((each) => each === step).length;
  const ofService = (containers: { State: string; Labels: Record<string, string> }[]) =>
    containers.filter((container) => container.Labels['io.teaminfra.service-id'] === serviceId);
  const runningOn = async (serverId: string) =>
    ofService(await containersOfServer(engineOf(serverId), serverId)).filter((container) => container.State === 'running' && container.Labels['io.teaminfra.role'] !== 'helper').length;
  const helpersOn = async (serverId: string) => ofService(await containersOfServer(engineOf(serverId), serverId, 'helper')).length;
  const dataVolumesOn = async (serverId: string) =>
    (await volumesOfServer(engineOf(serverId), serverId))
      .filter((volume) => volume.Labels['io.teaminfra.service-id'] === serviceId && volume.Labels['io.teaminfra.role'] === 'data').length;

  beforeAll(async () => {
    second = await startSecondEngine();
    const team = await adminDockerTeam(dataDir, 'Move crash team');
    ({ serverId: here, token } = team);
    db = openDatabase(dataDir);
    image = (db.sqlite.prepare('SELECT image FROM docker_servers WHERE server_id = ?').get(here) as { image: string }).image;
    await copyImages(api, second.api, [image]);
    there = (await admin(dataDir, ['create-server', '--team', team.teamId, '--name', 'there', '--docker-host', second.host, '--image', image])).id as string;
    serve = await startServe(dataDir, [], SERVE_ENV);
    const created = await act(serve.baseUrl, token, 'POST', '/api/service-erp', { server_id: here, name: 'Moving ERP' });
    expect(created.state).toBe('succeeded');
    serviceId = created.service_id as string;
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).state).toBe('succeeded');
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).state).toBe('succeeded');
    // Data of a real size: a copy that takes long enough to be interrupted in its middle.
    const size = await growServiceDatabase({ api, image, serverId: here }, serviceId, 8_000_000);
    expect(size).toBeGreaterThan(5_000_000);
    digest = await productsDigest({ api, image, serverId: here }, serviceId);
    expect((await act(serve.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).state).toBe('succeeded');
  }, 600_000);

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await db?.close();
    if (here) await removeEverythingOf(api, here).catch(() => undefined);
    await second?.stop();
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 180_000);

  /** Asks for a move to the other server; the operation's id, and the servers it goes from and to. */
  async function askMove() {
    const from = serverIdNow();
    const to = otherThan(from);
    const accepted = await send((serve as ServeProcess).baseUrl, 'POST', `/api/service-erp/${serviceId}/move`, token, { server_id: to });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    return { operationId: accepted.body.id as string, from, to };
  }

  /** Kills serve with SIGKILL; when it was killed. The point of the test: the move was in the middle of running. */
  async function killServe(operationId: string): Promise<number> {
    expect(await serve?.stop('SIGKILL')).toBeNull();
    expect(operationOf(operationId).state).toBe('running');
    return Date.now();
  }

  /** Asks for a move and kills serve once `reached` says it is at the step the test wants (asked again and again while it runs). */
  async function killDuringMove(reached: (operationId: string, from: string, to: string) => Promise<boolean>) {
    const move = await askMove();
    const deadline = Date.now() + 120_000;
    while (!(operationOf(move.operationId).state === 'running' && await reached(move.operationId, move.from, move.to))) {
      expect(operationOf(move.operationId).state, `the move ended before the step was seen: ${stepsOf(move.operationId).join(', ')}`).toMatch(/queued|running/);
      expect(Date.now(), 'the step was not reached in time').toBeLessThan(deadline);
      await sleep(2);
    }
    return { ...move, killedAt: await killServe(move.operationId) };
  }

  /**
   * Asks for a move and kills serve between its switch and the record of its end, a few
   * milliseconds apart: once the service runs on the new server, its row is read without pause,
   * and the moment it says the new server the database's write lock is taken, so that serve
   * records nothing more before it is killed.
   */
  async function killRightAfterSwitch() {
    const move = await askMove();
    const deadline = Date.now() + 120_000;
    while (!(await runningOn(move.to) > 0)) {
      expect(Date.now(), 'the service did not start on its new server in time').toBeLessThan(deadline);
      await sleep(2);
    }
    while (serverIdNow() !== move.to) expect(Date.now(), 'the move did not switch in time').toBeLessThan(deadline);
    // The write lock taken the moment the row says the new server: serve cannot record the end
    // after it. If serve's end was already under way, the lock waits for it and the move is
    // killed just after its end (the window is a few reads wide); either way it must end moved.
    db.sqlite.prepare('BEGIN IMMEDIATE').run();
    try {
      expect(await serve?.stop('SIGKILL')).toBeNull();
      return { ...move, killedAt: Date.now() };
    } finally {
      db.sqlite.prepare('ROLLBACK').run();
    }
  }

  /**
   * After a restart: the move ended or was undone, the service runs on exactly one server (its
   * row's), with its data, and answers. `pausedAtKill`: the service was already stopped for the
   * write pause when serve was killed, so a move that ended says a pause that covers the restart.
   */
  async function expectOneServiceWithItsData(move: { operationId: string; from: string; to: string; killedAt: number }, pausedAtKill = false) {
    serve = await startServe(dataDir, [], SERVE_ENV);
    const operation = await waitForOperation(serve.baseUrl, token, move.operationId, 300_000);
    const service = (await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).body;
    if (operation.state === 'succeeded') {
      expect(service.server_id).toBe(move.to);
      expect(operation.result).toMatchObject({ write_pause_ms: expect.any(Number) });
      // The service's real downtime, not only the resumed attempt's (the switch comes just before the end).
      if (pausedAtKill) expect(operation.result.write_pause_ms).toBeGreaterThan(Date.parse(operation.finished_at) - move.killedAt - 1_000);
    } else {
      expect(operation.reason).toMatch(/\w{10,}/);
      expect(service.server_id).toBe(move.from);
    }
    expect(service.state, JSON.stringify({ operation, service })).toBe('running');
    // Never both servers running it.
    const elsewhere = otherThan(service.server_id as string);
    expect(await runningOn(service.server_id as string)).toBeGreaterThan(0);
    expect(await runningOn(elsewhere)).toBe(0);
    expect(await helpersOn(here) + await helpersOn(there)).toBe(0);
    const home = await fetchText(service.url as string);
    expect(home.status).toBe(200);
    // Never its data missing: where it runs, it has all of it.
    expect(await productsDigest({ api: engineOf(service.server_id as string), image, serverId: service.server_id as string }, serviceId)).toEqual(digest);
    // Undone: nothing of it is left where it was going.
    if (operation.state === 'failed') expect(await dataVolumesOn(elsewhere)).toBe(0);
    return { operation, service };
  }

  it('ends or undoes a move killed while its data is copied with the service serving', async () => {
    const move = await killDuringMove(async (id, from, to) =>
      count(stepsOf(id), 'Copied the data to the other server') === 0 && await runningOn(from) > 0
      && (await helpersOn(from) > 0 || await dataVolumesOn(to) > 0));
    await expectOneServiceWithItsData(move);
  }, 600_000);

  it('ends or undoes a move killed as its write pause stops the service', async () => {
    const move = await killDuringMove(async (id) => {
      const steps = stepsOf(id);
      return count(steps, 'Copied the data to the other server') === 1 && count(steps, 'Stopped the service') === 0;
    });
    await expectOneServiceWithItsData(move);
  }, 600_000);

  it('ends or undoes a move killed during its final copy, with the service stopped', async () => {
    const move = await killDuringMove(async (id, from) => {
      const steps = stepsOf(id);
      return count(steps, 'Stopped the service') === 1 && count(steps, 'Copied the data to the other server') === 1 && await runningOn(from) === 0;
    });
    await expectOneServiceWithItsData(move, true);
  }, 600_000);

  it('ends or undoes a move killed while the service starts on its new server, before the switch', async () => {
    const move = await killDuringMove(async (_id, from, to) => serverIdNow() === from && await runningOn(to) > 0);
    await expectOneServiceWithItsData(move, true);
  }, 600_000);

  it('ends a move killed at its switch, before or just after its end was recorded: moved, running on the new server only', async () => {
    const move = await killRightAfterSwitch();
    const { operation } = await expectOneServiceWithItsData(move);
    expect(operation.state).toBe('succeeded');
  }, 600_000);
});
