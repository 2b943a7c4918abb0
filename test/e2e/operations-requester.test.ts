// A token always reads the operations it requested itself (GET /api/operations/{id} and the
// list), whatever its permissions and however its reach changed since, so the Location of a 202
// can always be polled. Other operations still take services:read and reach. Black-box, over
// REST and MCP against the real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceRestrictionLists } from '../../src/db/repositories/tokens.js';
import { addHistory, type SeededWithHistory } from '../support/catalog-samples.js';
import { getJson, makeToken, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';
import { connectHttp, problemIn } from '../mcp/clients.js';

let server: TestServer;
let team: SeededWithHistory;

beforeAll(async () => {
  server = await startTestServer();
  team = await addHistory(server.app, await seedTeam(server.app));
});
afterAll(async () => { await server.close(); });

async function post(path: string, token: string, body: object = {}) {
  const response = await fetch(server.baseUrl + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, location: response.headers.get('location'), body: await response.json() as { id: string } };
}

const idsOf = (page: { data: { id: string }[] }) => page.data.map((operation) => operation.id);

describe('GET /api/operations/{operation_id} and GET /api/operations for the token that requested them', () => {
  it('answers the Location of a 202 when the token has servers:write but not services:read', async () => {
    const creator = await makeToken(server.app, team.teamId, { permissions: ['servers:write'] });
    const accepted = await post('/api/servers', creator.value, { name: 'eu-2' });
    expect(accepted.status).toBe(202);
    expect(accepted.location).toBe(`/api/operations/${accepted.body.id}`);

    const polled = await getJson(server.baseUrl, accepted.location!, creator.value);
    expect(polled.status).toBe(200);
    expect(polled.body).toMatchObject({ id: accepted.body.id, kind: 'create_server', state: 'queued' });
    const listed = await getJson(server.baseUrl, '/api/operations', creator.value);
    expect(listed.status).toBe(200);
    expect(idsOf(listed.body)).toEqual([accepted.body.id]);
  });

  it('answers 404 for an operation another token requested when the token lacks services:read', async () => {
    const creator = await makeToken(server.app, team.teamId, { permissions: ['servers:write'] });
    const other = await getJson(server.baseUrl, `/api/operations/${team.operationId}`, creator.value);
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('not_found');
    expect(idsOf((await getJson(server.baseUrl, '/api/operations', creator.value)).body)).not.toContain(team.operationId);
  });

  it('keeps its own operation readable when the token no longer reaches the service it acted on', async () => {
    const operator = await makeToken(server.app, team.teamId, { permissions: ['services:operate'], services: [team.serviceIds[0]] });
    const started = await post(`/api/service-erp/${team.serviceIds[0]}/start`, operator.value);
    expect(started.status).toBe(202);
    await replaceRestrictionLists(server.app.db.kysely, operator.id, [team.serviceIds[1]], null);

    expect((await getJson(server.baseUrl, started.location!, operator.value)).status).toBe(200);
    const listed = idsOf((await getJson(server.baseUrl, '/api/operations', operator.value)).body);
    expect(listed).toContain(started.body.id);
    // The team's other operation on that service is out of its reach now, as the service is.
    expect(listed).not.toContain(team.operationId);
    expect((await getJson(server.baseUrl, `/api/operations/${team.operationId}`, operator.value)).status).toBe(404);
  });

  it('offers and answers the operation tools over MCP when the token lacks services:read', async () => {
    const creator = await makeToken(server.app, team.teamId, { permissions: ['servers:write'] });
    const accepted = await post('/api/servers', creator.value, { name: 'eu-3' });
    const { client, close } = await connectHttp(server.baseUrl, creator.value);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['get_operation', 'list_operations', 'create_server']));
    expect(names).not.toContain('list_erp_services');
    const own = await client.callTool({ name: 'get_operation', arguments: { operation_id: accepted.body.id } });
    expect(own.isError).toBeFalsy();
    expect((own.structuredContent as { id: string }).id).toBe(accepted.body.id);
    const other = await client.callTool({ name: 'get_operation', arguments: { operation_id: team.operationId } });
    expect(problemIn(other)?.code).toBe('not_found');
    await close();
  });
});
