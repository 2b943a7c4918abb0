// The Mcp-Method and Mcp-Name headers on /mcp: read before the body for the rate limiter and the
// audit, and checked against the body once it is read (a disagreement is refused 400, -32020).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { rpc } from '../mcp/clients.js';

const LIMIT = 4;
let server: TestServer;
let team: SeededTeam;

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { limit: LIMIT, windowSeconds: 60 } });
  team = await seedTeam(server.app);
});
afterAll(async () => { await server.close(); });

const token = async () => (await makeToken(server.app, team.teamId)).value;
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe('POST /mcp with Mcp-Method and Mcp-Name', () => {
  it('serves a request whose headers agree with its body', async () => {
    const response = await rpc(server.baseUrl, await token(), call(1, 'list_erp_services'), { 'mcp-method': 'tools/call', 'mcp-name': 'list_erp_services' });
    expect(response.status).toBe(200);
    expect(response.json().result.isError).toBeFalsy();
  });

  it('refuses with 400 and -32020 a request whose Mcp-Method differs from its body', async () => {
    const response = await rpc(server.baseUrl, await token(), call(2, 'list_erp_services'), { 'mcp-method': 'tools/list' });
    expect(response.status).toBe(400);
    expect(response.json().error).toEqual({
      code: -32020,
      message: 'Bad Request: The Mcp-Method header says "tools/list" but the body\'s method is "tools/call"; they must agree.',
    });
  });

  it('refuses with 400 and -32020 a request whose Mcp-Name differs from the tool it calls', async () => {
    const response = await rpc(server.baseUrl, await token(), call(3, 'stop_erp_service'), { 'mcp-method': 'tools/call', 'mcp-name': 'list_erp_services' });
    expect(response.status).toBe(400);
    expect(response.json().error.code).toBe(-32020);
    expect(response.json().error.message).toContain('The Mcp-Name header says "list_erp_services" but the body names "stop_erp_service"');
  });

  it('refuses headers sent with a batch, which they cannot describe', async () => {
    const response = await rpc(server.baseUrl, await token(), [call(4, 'list_erp_services'), call(5, 'list_servers')], { 'mcp-method': 'tools/call' });
    expect(response.status).toBe(400);
    expect(response.json().error.code).toBe(-32020);
  });

  it('audits a request refused before its body is read under the tool its headers name', async () => {
    const response = await rpc(server.baseUrl, 'ti_not_a_token', call(6, 'stop_erp_service'), { 'mcp-method': 'tools/call', 'mcp-name': 'stop_erp_service' });
    expect(response.status).toBe(401);
    await server.app.audit.flush();
    const rows = await server.app.db.kysely.selectFrom('audit_log').select(['action', 'outcome', 'channel'])
      .where('channel', '=', 'mcp').where('action', '=', 'stop_erp_service').execute();
    expect(rows).toContainEqual({ action: 'stop_erp_service', outcome: 'denied', channel: 'mcp' });
  });

  it('counts task polls that say so in Mcp-Method in a budget of their own', async () => {
    const bearer = await token();
    const poll = (id: number) => rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId: 'task_unknown' } },
      { 'mcp-method': 'tasks/get', 'mcp-name': 'task_unknown' });
    for (let id = 0; id < LIMIT; id++) expect((await rpc(server.baseUrl, bearer, call(id, 'list_erp_services'))).status).toBe(200);
    expect((await rpc(server.baseUrl, bearer, call(99, 'list_erp_services'))).status).toBe(429);
    // The calls' budget is spent; polls still get an answer, until their own budget is.
    for (let id = 0; id < LIMIT; id++) expect((await poll(id)).status, `poll ${id}`).toBe(200);
    const over = await poll(LIMIT);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });
});
