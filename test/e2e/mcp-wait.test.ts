// Long actions over MCP: the tool waits for its operation, with progress notifications when the
// client asks, and returns it as it stands when the time limit passes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp } from '../mcp/clients.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

describe('MCP action tools wait for their operation', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  const original = process.env.TEAMINFRA_MCP_WAIT_SECONDS;
  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 50, reconcileIntervalMs: 200 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId, { permissions: ['services:operate'] })).value;
  });
  afterEach(() => { process.env.TEAMINFRA_MCP_WAIT_SECONDS = original; });
  afterAll(async () => { await server.close(); });

  it('returns the succeeded operation of start_erp_service, with progress notifications', async () => {
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = '30';
    const connection = await connectHttp(server.baseUrl, token);
    const progress: string[] = [];
    const result = await connection.client.callTool(
      { name: 'start_erp_service', arguments: { service_id: team.serviceIds[0] } },
      undefined,
      { onprogress: (notification) => { progress.push(notification.message ?? ''); } },
    );
    await connection.close();
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ kind: 'start', state: 'succeeded', service_id: team.serviceIds[0] });
    expect(progress.at(-1)).toMatch(/^Operation op_\w+ is succeeded\.$/);
    const service = await server.app.db.kysely.selectFrom('erp_services').select('state').where('id', '=', team.serviceIds[0]).executeTakeFirstOrThrow();
    expect(service.state).toBe('running');
  });

  it('returns the operation still in progress, with its id, when the time limit passes', async () => {
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = '0';
    const connection = await connectHttp(server.baseUrl, token);
    const result = await connection.client.callTool({ name: 'stop_erp_service', arguments: { service_id: team.serviceIds[0] } });
    await connection.close();
    const operation = result.structuredContent as { id: string; state: string };
    expect(operation.id).toMatch(/^op_/);
    expect(['queued', 'running']).toContain(operation.state);
  });
});
