// An engine that stops answering, from outside: a proxy of the test's own forwards to the real
// engine and leaves the calls the test names without an answer. Every operation on such an
// engine fails within its deadline with a reason that names the call and the engine (never
// stays running), and `teaminfra serve` stops on SIGTERM within its grace period while an
// operation waits on the engine; the next start resumes that operation and finishes it.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, startServe, type ServeProcess } from '../../support/cli.js';
import { makeToken, seedTeam, startTestServer, tempDataDir, type TestServer } from '../../support/fixtures.js';
import { act, send, waitForOperation } from '../support/engine-http.js';
import { dockerAvailable, removeEverythingOf, TEST_DOCKER_HOST, testDockerApi } from './support/docker-engine.js';
import { adminDockerTeam } from './support/docker-team.js';
import { StallingEngine } from './support/stalling-engine.js';

const CALL_TIMEOUT_MS = 2_000;

describe.runIf(dockerAvailable)('an operation on a Docker engine that stops answering', () => {
  const api = testDockerApi();
  const engine = new StallingEngine();
  let engineAddress: string;
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;

  beforeAll(async () => {
    engineAddress = await engine.start();
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0, startTimeoutMs: 20_000, engineCallTimeoutMs: CALL_TIMEOUT_MS } }, {}, { engine: true });
    const team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    const image = (await admin(server.dataDir, ['build-erp-image', '--docker-host', TEST_DOCKER_HOST])).image;
    serverId = (await admin(server.dataDir, ['create-server', '--team', team.teamId, '--name', 'stalling', '--docker-host', engineAddress, '--image', image])).id;
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Stuck' });
    expect(created).toMatchObject({ state: 'succeeded' });
    serviceId = created.service_id;
  }, 300_000);
  afterAll(async () => {
    engine.stall = null;
    await server?.close();
    await engine.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  });

  it('a call that never answers fails the backup within its deadline, naming the call and the engine', async () => {
    engine.stall = { method: 'POST', path: /^\/containers\/create$/, how: 'silent' };
    try {
      const accepted = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/backups`, token);
      const started = Date.now();
      const failed = await waitForOperation(server.baseUrl, token, accepted.body.id, 30_000);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toContain(`The Docker engine at ${engineAddress} did not answer POST /containers/create within 2 s`);
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      engine.stall = null;
    }
  });

  it('an archive whose bytes stop coming fails the backup on silence', async () => {
    engine.stall = { method: 'GET', path: /^\/containers\/[^/]+\/archive$/, how: 'quiet-body' };
    try {
      const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toMatch(new RegExp(`The Docker engine at ${engineAddress} did not answer GET /containers/[0-9a-f]+/archive within 2 s`));
    } finally {
      engine.stall = null;
    }
  });

  it('an upload the engine stops reading fails the copy on silence', async () => {
    engine.stall = { method: 'PUT', path: /^\/containers\/[^/]+\/archive$/, how: 'unread' };
    try {
      const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/copies`, { name: 'Stuck copy' });
      expect(failed.state).toBe('failed');
      expect(failed.reason).toMatch(new RegExp(`did not answer PUT /containers/[0-9a-f]+/archive within 2 s`));
      expect(failed.reason).toContain(engineAddress);
    } finally {
      engine.stall = null;
    }
  });

  it('the engine answers again: the same backup succeeds, and no helper container is left behind', async () => {
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/backups`)).toMatchObject({ state: 'succeeded' });
    const helpers = await api.json<unknown[]>('GET', '/containers/json', {
      query: { all: 1, filters: JSON.stringify({ label: [`io.teaminfra.service-id=${serviceId}`, 'io.teaminfra.role=helper'] }) },
    });
    expect(helpers).toEqual([]);
  });
});

describe.runIf(dockerAvailable)('teaminfra serve on SIGTERM while an operation waits on an engine that does not answer', () => {
  const api = testDockerApi();
  const engine = new StallingEngine();
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let serverId: string | undefined;

  afterAll(async () => {
    engine.stall = null;
    await serve?.stop('SIGKILL');
    await engine.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops within its grace period, and the next start resumes the operation and finishes it', async () => {
    const engineAddress = await engine.start();
    const team = await adminDockerTeam(dataDir, 'Stop team', engineAddress);
    serverId = team.serverId;
    const { token } = team;
    // An engine call that would wait ten minutes: only the shutdown's own grace can end it.
    const env = { TEAMINFRA_ENGINE_CALL_TIMEOUT_MS: '600000', TEAMINFRA_START_TIMEOUT_MS: '20000' };
    serve = await startServe(dataDir, [], env);
    const created = await act(serve.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Stopping ERP' });
    expect(created.state).toBe('succeeded');

    engine.stall = { method: 'POST', path: /^\/containers\/create$/, how: 'silent' };
    const accepted = await send(serve.baseUrl, 'POST', `/api/service-erp/${created.service_id}/backups`, token);
    expect(accepted.status).toBe(202);
    await engine.waitForStall();
    const signalled = Date.now();
    const code = await serve.stop('SIGTERM');
    const stoppedAfterMs = Date.now() - signalled;
    expect(code).toBe(0);
    // The grace period is 10 s (requests and operations side by side); a stop that waited for the engine would take ten minutes.
    expect(stoppedAfterMs).toBeLessThan(15_000);
    expect(serve.output()).toContain('were left to the next start');

    engine.stall = null;
    serve = await startServe(dataDir, [], env);
    const resumed = await waitForOperation(serve.baseUrl, token, accepted.body.id, 120_000);
    expect(resumed).toMatchObject({ state: 'succeeded' });
    const backup = await send(serve.baseUrl, 'GET', `/api/backups/${resumed.backup_id}`, token);
    expect(backup.body).toMatchObject({ state: 'completed' });
  }, 240_000);
});
