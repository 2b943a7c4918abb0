// What /mcp does with input a careful client would never send: wrong argument types, unknown
// arguments, oversized bodies, malformed JSON and malformed JSON-RPC. Each gets a clear error,
// and the server goes on serving the next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectHttp, problemIn, rpc, textOf } from '../mcp/clients.js';

let server: TestServer;
let team: SeededTeam;
let bearer: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  bearer = (await makeToken(server.app, team.teamId)).value;
});
afterAll(async () => { await server.close(); });

/** A 2026-07-28 request's own version and capabilities (no extension declared). */
const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

const call = (name: string, args: unknown, id = 1) =>
  rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function stillServes(): Promise<void> {
  const { client, close } = await connectHttp(server.baseUrl, bearer);
  const result = await client.callTool({ name: 'list_erp_services', arguments: {} });
  await close();
  expect(result.isError).toBeFalsy();
}

describe('tool arguments', () => {
  it('refuses an argument of the wrong type with validation_failed naming the field', async () => {
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const wrongId = await client.callTool({ name: 'get_erp_service', arguments: { service_id: 42 } });
    const wrongLimit = await client.callTool({ name: 'list_erp_services', arguments: { limit: 'many' } });
    const wrongCapacity = await client.callTool({ name: 'create_server', arguments: { name: 'eu-1', capacity: 'lots' } });
    await close();
    expect(problemIn(wrongId)).toMatchObject({ code: 'validation_failed', status: 400, errors: [{ field: 'service_id' }] });
    expect(textOf(wrongId)).toMatch(/^validation_failed: The request has invalid fields: service_id\.\n- service_id: /);
    expect(problemIn(wrongLimit)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'limit' }] });
    expect(problemIn(wrongCapacity)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'capacity' }] });
    await stillServes();
  });

  it('refuses unknown arguments with validation_failed naming them', async () => {
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const result = await client.callTool({ name: 'list_erp_services', arguments: { colour: 'red', size: 3 } });
    await close();
    expect(problemIn(result)).toMatchObject({ code: 'validation_failed', detail: 'The request has invalid fields: colour, size.' });
  });

  it('answers arguments that are not an object with a JSON-RPC invalid-params error', async () => {
    const response = await call('list_erp_services', 'everything');
    expect(response.status).toBe(200);
    expect(response.json().error).toEqual({ code: -32602, message: 'Invalid tools/call request: params.arguments must be an object.' });
    await stillServes();
  });

  it('treats missing arguments as an empty object', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services' } });
    expect(response.json().result.structuredContent.data).toHaveLength(2);
  });
});

describe('malformed MCP requests', () => {
  it('answers -32602 with a sentence naming params.name when a tools/call has no tool name', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } });
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({
      jsonrpc: '2.0', id: 3,
      error: { code: -32602, message: 'Invalid tools/call request: params.name is missing; it must be a string.' },
    });
    await stillServes();
  });

  it('answers -32602 with a sentence, not an issue list, when any request has malformed params', async () => {
    const cases = [
      [{ method: 'tools/call' }, 'Invalid tools/call request: params is missing; it must be an object.'],
      [{ method: 'tools/call', params: { name: 42 } }, 'Invalid tools/call request: params.name must be a string.'],
      [{ method: 'tools/list', params: { cursor: 5 } }, 'Invalid tools/list request: params.cursor must be a string.'],
    ] as const;
    for (const [request, message] of cases) {
      const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 4, ...request });
      expect(response.json().error, message).toEqual({ code: -32602, message });
    }
  });

  it('answers each malformed request of a batch on its own and the others normally', async () => {
    const response = await rpc(server.baseUrl, bearer, [
      { jsonrpc: '2.0', id: 'bad', method: 'tools/call', params: {} },
      { jsonrpc: '2.0', id: 'good', method: 'tools/list' },
    ]);
    const answers = response.json() as { id: string; error?: { code: number }; result?: { tools: unknown[] } }[];
    expect(answers.find((answer) => answer.id === 'bad')?.error?.code).toBe(-32602);
    expect(answers.find((answer) => answer.id === 'good')?.result?.tools.length).toBeGreaterThan(0);
  });
});

describe('HTTP bodies and JSON-RPC framing', () => {
  it('refuses a body over the size limit with 413 and keeps serving', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'list_erp_services', arguments: { cursor: 'x'.repeat(server.app.config.bodyLimitBytes) } },
    });
    const response = await rpc(server.baseUrl, bearer, huge);
    expect(response.status).toBe(413);
    expect(response.json().code).toBe('payload_too_large');
    await stillServes();
  });

  it('checks the token before reading an oversized body', async () => {
    const response = await rpc(server.baseUrl, undefined, 'x'.repeat(server.app.config.bodyLimitBytes * 2));
    expect(response.status).toBe(401);
  });

  it('answers malformed JSON with a JSON-RPC parse error and keeps serving', async () => {
    const response = await rpc(server.baseUrl, bearer, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid JSON.' },
    });
    await stillServes();
  });

  it('answers -32600 Invalid Request, not a parse error, when the body is JSON but not a JSON-RPC message, and keeps serving', async () => {
    for (const body of [{ hello: 'world' }, { jsonrpc: '1.0', id: 1, method: 'tools/list' }, [1, 2, 3]]) {
      const response = await rpc(server.baseUrl, bearer, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.json().error.code).toBe(-32600);
    }
    expect((await rpc(server.baseUrl, bearer, { jsonrpc: '1.0', id: 'mine', method: 'tools/list' })).json().id).toBe('mine');
    await stillServes();
  });

  it('answers a batch with an array of responses and a notification alone with 202', async () => {
    const batch = await rpc(server.baseUrl, bearer, [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'get_current_token', arguments: {} } },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.json().map((response: { id: string }) => response.id).sort()).toEqual(['a', 'b']);
    const notification = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
    expect(notification.text).toBe('');
  });

  it('refuses an initialize request batched with others, and an empty batch', async () => {
    const mixed = await rpc(server.baseUrl, bearer, [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    expect(mixed.status).toBe(400);
    expect(mixed.json().error.code).toBe(-32600);
    expect((await rpc(server.baseUrl, bearer, [])).status).toBe(400);
  });

  it('refuses a protocol version it does not speak with -32022, the versions to choose from and the request id', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 41, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      id: 41,
      error: { code: -32022, message: expect.stringContaining('Unsupported protocol version: 1999-01-01'), data: { supported: ['2026-07-28'], requested: '1999-01-01' } },
    });
  });

  it('answers a refusal before dispatch with the request id when the headers disagree with the body', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 'h1', method: 'tools/list' }, { 'mcp-method': 'tools/call' });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ id: 'h1', error: { code: -32020 } });
  });

  it('answers tasks/get, tasks/update and tasks/cancel with -32021 naming the tasks extension when a 2026-07-28 request does not declare it', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: method, method, params: { _meta: MODERN_META, taskId: 'tsk_any' } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': 'tsk_any' });
      expect(response.status, method).toBe(400);
      expect(response.json(), method).toMatchObject({
        id: method, error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
      });
    }
  });

  it('answers initialize sent as a 2026-07-28 request with 404 and -32601, like the other removed methods', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 'i', method: 'initialize', params: { _meta: MODERN_META } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'initialize' });
    expect(response.status).toBe(404);
    expect(response.json()).toMatchObject({ id: 'i', error: { code: -32601 } });
  });

  it('answers an unknown method with JSON-RPC method-not-found', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 9, method: 'resources/list' });
    expect(response.json()).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it('refuses a body that is not JSON with 415', async () => {
    for (const type of ['application/xml', 'text/plain']) {
      const response = await rpc(server.baseUrl, bearer, '<tools/>', { 'content-type': type });
      expect(response.status, type).toBe(415);
    }
    await stillServes();
  });

  it('refuses a client that accepts neither JSON nor an event stream with 406', async () => {
    const response = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'text/html' });
    expect(response.status).toBe(406);
  });
});
