// Start, stop, redeploy, create and delete over REST, against the real server with its engine:
// every service is a real child process, reached over HTTP on its own port.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTransitions } from '../../src/db/repositories/operations.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import {
  act, fetchText, killProcessesMatching, portOf, processesMatching, send, tryConnect, waitForOperation,
} from '../engine/support/engine-http.js';

describe('ERP service operations over REST', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let tokenId: string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 200 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    ({ value: token, id: tokenId } = await makeToken(server.app, team.teamId));
  });
  afterAll(async () => {
    const dataDir = server.dataDir;
    await server.close();
    expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  const service = async (id: string) => (await send(server.baseUrl, 'GET', `/api/service-erp/${id}`, token)).body;

  it('POST /api/service-erp/{id}/start answers 202 with the operation and a Location, then serves the home page', async () => {
    const [serviceId] = team.serviceIds;
    const accepted = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ kind: 'start', service_id: serviceId, requested_channel: 'api' });
    expect(['queued', 'running']).toContain(accepted.body.state);
    expect(accepted.headers.get('location')).toBe(`/api/operations/${accepted.body.id}`);

    const done = await waitForOperation(server.baseUrl, token, accepted.body.id);
    expect(done).toMatchObject({ state: 'succeeded', reason: null });
    const running = await service(serviceId);
    expect(running.state).toBe('running');
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const home = await fetchText(running.url);
    expect(home.status).toBe(200);
    expect(home.text).toContain('<h1>ERP A</h1>');
    expect(home.text).toContain('Deployed revision: <strong data-revision="1">1</strong>');
    expect(processesMatching(serviceId)).toHaveLength(1);
  });

  it('POST /api/service-erp/{id}/stop ends the process: the port refuses connections', async () => {
    const [serviceId] = team.serviceIds;
    const port = portOf((await service(serviceId)).url);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    expect(await service(serviceId)).toMatchObject({ state: 'stopped', url: null });
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(processesMatching(serviceId)).toHaveLength(0);
  });

  it('POST /api/service-erp/{id}/redeploy serves the next revision on the same address', async () => {
    const [serviceId] = team.serviceIds;
    await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    const before = await service(serviceId);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/redeploy`)).toMatchObject({ state: 'succeeded' });
    const after = await service(serviceId);
    expect(after).toMatchObject({ state: 'running', revision: 2, url: before.url });
    expect((await fetchText(after.url)).text).toContain('Deployed revision: <strong data-revision="2">2</strong>');
    expect(processesMatching(serviceId)).toHaveLength(1);
  });

  it('answers one operation and 409 naming it to concurrent start requests', async () => {
    const serviceId = team.serviceIds[1];
    const responses = await Promise.all(Array.from({ length: 6 }, () =>
      send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token)));
    const accepted = responses.filter((response) => response.status === 202);
    const refused = responses.filter((response) => response.status === 409);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(5);
    const operationId = accepted[0]?.body.id as string;
    for (const response of refused) {
      expect(response.body).toMatchObject({ code: 'conflict', operation_id: operationId });
      expect(response.body.detail).toContain(operationId);
    }
    await waitForOperation(server.baseUrl, token, operationId);
    expect(processesMatching(serviceId)).toHaveLength(1);
  });

  it('answers 404 to an action on a service outside the token\'s reach', async () => {
    const restricted = await makeToken(server.app, team.teamId, { services: [team.serviceIds[0]] });
    const outside = await send(server.baseUrl, 'POST', `/api/service-erp/${team.serviceIds[1]}/stop`, restricted.value);
    expect(outside.status).toBe(404);
    expect(outside.body.code).toBe('not_found');
    const otherTeam = await seedTeam(server.app, { name: 'Other team' });
    const foreign = await send(server.baseUrl, 'POST', `/api/service-erp/${otherTeam.serviceIds[0]}/start`, token);
    expect(foreign.status).toBe(404);
    expect(await service(team.serviceIds[1])).toMatchObject({ state: 'running' });
  });

  it('answers 403 to a token without services:operate', async () => {
    const reader = await makeToken(server.app, team.teamId, { permissions: ['services:read'] });
    const refused = await send(server.baseUrl, 'POST', `/api/service-erp/${team.serviceIds[1]}/stop`, reader.value);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('This API token does not have the services:operate scope.');
  });

  it('returns the same operation for a retry with the same Idempotency-Key, and refuses the key for another request', async () => {
    const serviceId = team.serviceIds[1];
    const key = { 'Idempotency-Key': `stop-${serviceId}` };
    const first = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, token, undefined, key);
    const retry = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, token, undefined, key);
    expect(first.status).toBe(202);
    expect(retry.status).toBe(202);
    expect(retry.body.id).toBe(first.body.id);
    const other = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token, undefined, key);
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/Idempotency-Key was already used for a different request/);
    await waitForOperation(server.baseUrl, token, first.body.id);
    const afterwards = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, token, undefined, key);
    expect(afterwards.body).toMatchObject({ id: first.body.id, state: 'succeeded' });
  });

  it('records every transition with time, token and channel, and an event for every state change', async () => {
    const serviceId = team.serviceIds[1];
    const done = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    const transitions = await listTransitions(server.app.db.kysely, done.id);
    expect(transitions.map((row) => row.state)).toEqual(['queued', 'running', 'succeeded']);
    for (const row of transitions) {
      expect(row).toMatchObject({ token_id: tokenId, channel: 'api' });
      expect(Date.parse(row.at)).not.toBeNaN();
    }
    const events = await server.app.db.kysely.selectFrom('events').select(['type', 'payload'])
      .where('team_id', '=', team.teamId).where('payload', 'like', `%${done.id}%`).orderBy('id').execute();
    expect(events.map((event) => event.type)).toEqual([
      'service.starting', 'operation.queued', 'operation.running', 'operation.succeeded', 'service.started',
    ]);
    const started = JSON.parse(events[4]?.payload as string);
    expect(started).toMatchObject({ type: 'service.started', data: { service: { id: serviceId, state: 'running' }, operation_id: done.id } });
    expect(Date.parse(started.timestamp)).not.toBeNaN();
  });

  it('shows a running service failed, with the reason, when its process dies on its own', async () => {
    const serviceId = team.serviceIds[1];
    const [pid] = processesMatching(serviceId);
    process.kill(pid as number, 'SIGKILL');
    const deadline = Date.now() + 5000;
    while ((await service(serviceId)).state === 'running' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await service(serviceId)).toMatchObject({ state: 'failed', url: null });
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
  });

  describe('a service whose port is taken by another program', () => {
    let intruder: Server | undefined;
    afterAll(() => new Promise<void>((resolve) => (intruder ? intruder.close(() => resolve()) : resolve())));

    it('fails the start with a readable reason, shows the service failed, and a later start succeeds', async () => {
      const serviceId = team.serviceIds[1];
      const port = portOf((await service(serviceId)).url);
      await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`);
      // Accepts connections and says nothing, as a program that is not an ERP service might.
      intruder = createServer((socket) => socket.resume());
      await new Promise<void>((resolve) => intruder?.listen(port, '127.0.0.1', resolve));

      const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
      expect(failed.state).toBe('failed');
      expect(failed.reason).toBe(`Port 127.0.0.1:${port} is already in use by another program, so the ERP service could not ` +
        'listen on it. Its port was released: start it again to give it a new one.');
      expect(await service(serviceId)).toMatchObject({ state: 'failed', url: null });
      expect(processesMatching(serviceId)).toHaveLength(0);

      expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
      const recovered = await service(serviceId);
      expect(recovered.state).toBe('running');
      expect(portOf(recovered.url)).not.toBe(port);
      expect((await fetchText(recovered.url)).status).toBe(200);
    });
  });

  describe('creating and deleting', () => {
    it('creates a server, an ERP service on it, runs it, and deletes it with its files and process', async () => {
      const createdServer = await act(server.baseUrl, token, 'POST', '/api/servers', { name: 'eu-1', capacity: 2 });
      expect(createdServer).toMatchObject({ kind: 'create_server', state: 'succeeded', service_id: null });
      const serverId = createdServer.server_id as string;
      expect((await send(server.baseUrl, 'GET', `/api/servers/${serverId}`, token)).body).toMatchObject({ state: 'ready', capacity: 2 });

      const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'Shop ERP' });
      expect(created).toMatchObject({ kind: 'create', state: 'succeeded', server_id: serverId });
      const serviceId = created.service_id as string;
      expect(await service(serviceId)).toMatchObject({ name: 'Shop ERP', state: 'stopped', server_id: serverId });

      await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
      const url = (await service(serviceId)).url as string;
      expect((await fetchText(url)).text).toContain('Shop ERP');

      const deleted = await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${serviceId}`);
      expect(deleted).toMatchObject({ kind: 'delete', state: 'succeeded' });
      expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}`, token)).status).toBe(404);
      expect(await tryConnect(portOf(url))).toBe('ECONNREFUSED');
      expect(processesMatching(serviceId)).toHaveLength(0);
    });

    it('creates one service for a retried POST /api/service-erp with the same Idempotency-Key', async () => {
      const key = { 'Idempotency-Key': 'create-billing-erp' };
      const body = { server_id: team.serverIds[1], name: 'Billing ERP' };
      const first = await send(server.baseUrl, 'POST', '/api/service-erp', token, body, key);
      const retry = await send(server.baseUrl, 'POST', '/api/service-erp', token, { name: 'Billing ERP', server_id: team.serverIds[1] }, key);
      expect(first.status).toBe(202);
      expect(retry.body).toMatchObject({ id: first.body.id, service_id: first.body.service_id });
      const named = await server.app.db.kysely.selectFrom('erp_services').select('id').where('name', '=', 'Billing ERP').execute();
      expect(named).toHaveLength(1);
      const changed = await send(server.baseUrl, 'POST', '/api/service-erp', token, { ...body, name: 'Other ERP' }, key);
      expect(changed.status).toBe(409);
      await waitForOperation(server.baseUrl, token, first.body.id);
    });

    it('refuses a new service on a full server with 409', async () => {
      const serverId = (await act(server.baseUrl, token, 'POST', '/api/servers', { name: 'tiny', capacity: 1 })).server_id;
      await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: serverId, name: 'First' });
      const refused = await send(server.baseUrl, 'POST', '/api/service-erp', token, { server_id: serverId, name: 'Second' });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toBe(`Server ${serverId} is full: it hosts 1 of 1 ERP services. Choose another server.`);
    });

    it('deletes a service\'s copies with it', async () => {
      const [parentId] = team.serviceIds;
      await act(server.baseUrl, token, 'POST', `/api/service-erp/${team.copyId}/start`);
      const done = await act(server.baseUrl, token, 'DELETE', `/api/service-erp/${parentId}`);
      expect(done.state).toBe('succeeded');
      expect((await send(server.baseUrl, 'GET', `/api/service-erp/${team.copyId}`, token)).status).toBe(404);
      expect(processesMatching(team.copyId)).toHaveLength(0);
      expect(processesMatching(parentId)).toHaveLength(0);
      const deletions = await server.app.db.kysely.selectFrom('events').select('type')
        .where('payload', 'like', `%${done.id}%`).where('type', 'like', '%.deleted').orderBy('id').execute();
      expect(deletions.map((event) => event.type)).toEqual(['copy.deleted', 'service.deleted']);
    });
  });
});
