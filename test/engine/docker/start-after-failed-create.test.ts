// A service whose create failed (its app's image is not on the engine, so no secret, network or
// volume was made) cannot be started or redeployed: both are refused at once (409) with what to
// do, over REST and MCP, where a start used to be accepted and then fail with an internal error
// (the log: `No value for ${DB_PASSWORD}`). Delete still works. On a real Docker engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApp } from '../../../src/engine/apps/app-registry.js';
import { connectHttp, problemIn } from '../../mcp/clients.js';
import { send, waitForOperation } from '../support/engine-http.js';
import { startDockerTeam } from './support/docker-team.js';
import { dockerAvailable, removeEverythingOf, testDockerApi } from './support/docker-engine.js';
import type { TestServer } from '../../support/fixtures.js';

describe.runIf(dockerAvailable)('POST /api/service-erp/{service_id}/start of a service whose create failed', () => {
  const api = testDockerApi();
  let server: TestServer;
  let token: string;
  let serverId: string;
  let serviceId: string;
  let createOperationId: string;

  beforeAll(async () => {
    const team = await startDockerTeam();
    ({ server, token } = team);
    serverId = await team.addServer('failed-create');
    // Its one container names a generated secret, as the second ERP's definition did.
    await addApp(server.app.db.kysely, [
      'name: unbuilt-with-secret', 'services:', '  web:', '    image: teaminfra-test-never-built:1', '    environment:',
      '      DATABASE_PASSWORD: ${DB_PASSWORD}', '    ports:', '      - "8080"', 'x-teaminfra:', '  web: web', '  secrets: [DB_PASSWORD]', '',
    ].join('\n'), { replace: false });
    const accepted = await send(server.baseUrl, 'POST', '/api/service-erp', token, { server_id: serverId, name: 'Never made', app: 'unbuilt-with-secret' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    ({ id: createOperationId, service_id: serviceId } = accepted.body);
    expect(await waitForOperation(server.baseUrl, token, createOperationId, 60_000)).toMatchObject({ state: 'failed' });
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    if (serverId) await removeEverythingOf(api, serverId);
    await api.close();
  }, 120_000);

  const refusal = (kind: string) => `ERP service ${serviceId} was never created: its create operation ${createOperationId} failed, ` +
    `so there is nothing to ${kind}. Delete it and create the service again.`;

  it('refuses the start and the redeploy with 409 and what to do, and queues nothing', async () => {
    const start = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/start`, token);
    expect(start.status, JSON.stringify(start.body)).toBe(409);
    expect(start.body).toMatchObject({ code: 'conflict', detail: refusal('start') });
    const redeploy = await send(server.baseUrl, 'POST', `/api/service-erp/${serviceId}/redeploy`, token);
    expect(redeploy.status).toBe(409);
    expect(redeploy.body.detail).toBe(refusal('redeploy'));
    const operations = await server.app.db.kysely.selectFrom('operations').select('kind').where('service_id', '=', serviceId).execute();
    expect(operations.map((row) => row.kind)).toEqual(['create']);
  });

  it('refuses start_erp_service over MCP with the same sentence', async () => {
    const { client, close } = await connectHttp(server.baseUrl, token);
    const result = await client.callTool({ name: 'start_erp_service', arguments: { service_id: serviceId } });
    await close();
    expect(result.isError).toBe(true);
    expect(problemIn(result)).toMatchObject({ code: 'conflict', detail: refusal('start') });
  });

  it('still deletes the service', async () => {
    const deleted = await send(server.baseUrl, 'DELETE', `/api/service-erp/${serviceId}`, token);
    expect(deleted.status).toBe(202);
    expect(await waitForOperation(server.baseUrl, token, deleted.body.id, 60_000)).toMatchObject({ state: 'succeeded' });
  }, 90_000);
});
