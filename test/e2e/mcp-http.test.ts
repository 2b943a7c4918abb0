// MCP over streamable HTTP at /mcp, black-box: the real server on a free port, the SDK's own
// Client configured from the HTTP entry of mcp.config.json, and raw HTTP where a test needs to
// send what a well-behaved client never would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateInTimeZone } from '../../src/auth/expiry.js';
import { expandPermissions } from '../../src/auth/permissions.js';
import { displayParts, generateTokenValue } from '../../src/auth/token-format.js';
import { replaceTokenValue, revokeToken } from '../../src/db/repositories/tokens.js';
import { catalog } from '../../tools/index.js';
import { addHistory, type SeededWithHistory } from '../support/catalog-samples.js';
import { getJson, makeToken, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';
import { connectHttp, INITIALIZE, problemIn, rawRequest, rpc, textOf } from '../mcp/clients.js';
import { sendRawHttp } from '../support/raw-http.js';

let server: TestServer;
let team: SeededWithHistory;

beforeAll(async () => {
  server = await startTestServer();
  team = await addHistory(server.app, await seedTeam(server.app));
});
afterAll(async () => { await server.close(); });

const token = (options: Parameters<typeof makeToken>[2] = {}) => makeToken(server.app, team.teamId, options);

function yesterdayUtc(): string {
  const date = new Date(`${dateInTimeZone(new Date(), 'UTC')}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

describe('tools/list over streamable HTTP', () => {
  it('lists every capability of the catalog to a full-access token, with schemas and hints', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token()).value);
    const { tools } = await client.listTools();
    await close();
    expect(tools.map((tool) => tool.name).sort()).toEqual(catalog.map((capability) => capability.name).sort());
    for (const capability of catalog) {
      const tool = tools.find((candidate) => candidate.name === capability.name)!;
      expect(tool.title).toBe(capability.title);
      expect(tool.description).toBe(capability.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      // Read with the MCP defaults for a hint left out (readOnly false, destructive true, idempotent
      // false); destructive and idempotent mean something only for a write. openWorldHint is never
      // sent (the lean tool list, src/mcp/tool-definitions.ts): a client reads an open world.
      const hints = tool.annotations ?? {};
      expect(hints.readOnlyHint ?? false, tool.name).toBe(capability.hints.readOnly);
      expect(hints.openWorldHint, tool.name).toBeUndefined();
      if (!capability.hints.readOnly) {
        expect(hints.destructiveHint ?? true, tool.name).toBe(capability.hints.destructive);
        expect(hints.idempotentHint ?? false, tool.name).toBe(capability.hints.idempotent);
      }
    }
  });

  it('lists only the services:read tools and get_current_token to a services:read token', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token({ permissions: ['services:read'] })).value);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    await close();
    const held = expandPermissions(['services:read']);
    const expected = catalog.filter((capability) => capability.permission === null || held.has(capability.permission));
    expect(names).toEqual(expected.map((capability) => capability.name).sort());
    expect(names).toContain('get_current_token');
    expect(names).toContain('list_erp_services');
    expect(names).not.toContain('list_servers');
    expect(names).not.toContain('list_backups');
  });
});

describe('tools/call over streamable HTTP', () => {
  it('returns structuredContent and the same data as JSON text for a successful call', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token()).value);
    const result = await client.callTool({ name: 'list_erp_services', arguments: {} });
    await close();
    expect(result.isError).toBeFalsy();
    const ids = (result.structuredContent as { data: { id: string }[] }).data.map((service) => service.id);
    expect(ids).toEqual(team.serviceIds);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('refuses a call without the permission with missing_permission and the REST sentence', async () => {
    const reader = await token({ permissions: ['services:read'] });
    const { client, close } = await connectHttp(server.baseUrl, reader.value);
    const result = await client.callTool({ name: 'list_servers', arguments: {} });
    await close();
    const rest = await getJson(server.baseUrl, '/api/servers', reader.value);
    expect(rest.status).toBe(403);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('missing_permission: This API token does not have the servers:read scope.');
    expect(problemIn(result)).toEqual(rest.body);
  });

  it('answers not_found for an ERP service outside the token reach, as REST does', async () => {
    const restricted = await token({ services: [team.serviceIds[1]] });
    const { client, close } = await connectHttp(server.baseUrl, restricted.value);
    const result = await client.callTool({ name: 'get_erp_service', arguments: { service_id: team.serviceIds[0] } });
    const reachable = await client.callTool({ name: 'get_erp_service', arguments: { service_id: team.serviceIds[1] } });
    await close();
    const rest = await getJson(server.baseUrl, `/api/service-erp/${team.serviceIds[0]}`, restricted.value);
    expect(problemIn(result)?.code).toBe('not_found');
    expect(problemIn(result)).toEqual(rest.body);
    expect(reachable.isError).toBeFalsy();
  });

  it('refuses a token-management tool with a sentence pointing to the API Tokens page', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token()).value);
    for (const name of ['create_token', 'revoke_api_token', 'list_tokens', 'rotateToken']) {
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError, name).toBe(true);
      expect(problemIn(result)?.code).toBe('token_management_not_available');
      expect(textOf(result)).toMatch(/API Tokens page of the panel.*by owners and admins/);
    }
    await close();
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error naming it', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token()).value);
    await expect(client.callTool({ name: 'launch_rockets', arguments: {} })).rejects.toMatchObject({
      code: -32602, message: expect.stringContaining('Unknown tool "launch_rockets"'),
    });
    await close();
  });

  it('refuses a call of a hidden tool through invoke(): hiding is not the enforcement', async () => {
    const reader = await token({ permissions: ['services:read'] });
    const response = await rpc(server.baseUrl, reader.value, {
      jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_server', arguments: { server_id: team.serverIds[0] } },
    });
    expect(response.status).toBe(200);
    expect(response.json().result.isError).toBe(true);
    expect(problemIn(response.json().result)?.code).toBe('missing_permission');
  });
  it('answers over an SSE stream, with the same result, when the client asks for progress', async () => {
    const { client, close } = await connectHttp(server.baseUrl, (await token()).value);
    const plain = await client.callTool({ name: 'list_erp_services', arguments: {} });
    const streamed = await client.callTool({ name: 'list_erp_services', arguments: {} }, undefined, { onprogress: () => {} });
    await close();
    expect(streamed).toEqual(plain);
    const raw = await rpc(server.baseUrl, (await token()).value, {
      jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_current_token', arguments: {}, _meta: { progressToken: 'p1' } },
    });
    expect(raw.headers['content-type']).toBe('text/event-stream');
    expect(raw.text).toMatch(/^event: message\ndata: \{"result":/);
  });

  it('hands out download links as absolute URLs of this server, serving the same bytes as REST', async () => {
    const bearer = (await token()).value;
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const result = await client.callTool({ name: 'download_caught_email', arguments: { email_id: team.emailId } });
    await close();
    const link = (result.structuredContent as { download_url: string }).download_url;
    expect(link.startsWith(`${server.baseUrl}/`)).toBe(true);
    const viaLink = await (await fetch(link)).text();
    const viaRest = await (await fetch(`${server.baseUrl}/api/emails/${team.emailId}/raw`, { headers: { Authorization: `Bearer ${bearer}` } })).text();
    expect(viaLink).toBe(viaRest);
    expect(viaLink.length).toBeGreaterThan(0);
  });
});

describe('tokens on /mcp', () => {
  it('refuses a request without a bearer with 401 and WWW-Authenticate Bearer realm="teaminfra" naming the scope and where to sign in', async () => {
    const response = await rpc(server.baseUrl, undefined, INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['www-authenticate'])
      .toBe(`Bearer realm="teaminfra", scope="mcp", resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect(response.json().code).toBe('invalid_token');
  });

  it('refuses an expired token with 401 invalid_token, and the SDK client cannot connect', async () => {
    const expired = await token({ expiresOn: yesterdayUtc() });
    const response = await rpc(server.baseUrl, expired.value, INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="teaminfra", error="invalid_token"/);
    await expect(connectHttp(server.baseUrl, expired.value)).rejects.toThrow(/invalid_token/);
  });

  it('refuses a REST-only token with channel_not_accepted', async () => {
    const restOnly = await token({ acceptedBy: 'api' });
    const response = await rpc(server.baseUrl, restOnly.value, INITIALIZE);
    expect(response.status).toBe(403);
    expect(response.json()).toMatchObject({
      code: 'channel_not_accepted',
      detail: expect.stringContaining('accepted only by the REST API and command line, not by the MCP server'),
    });
    await expect(connectHttp(server.baseUrl, restOnly.value)).rejects.toThrow(/channel_not_accepted/);
    // The same token still works where it is accepted.
    expect((await getJson(server.baseUrl, '/api/token', restOnly.value)).status).toBe(200);
  });

  it('refuses a token of a team whose plan excludes the API with plan_excludes_api', async () => {
    const free = await seedTeam(server.app, { name: 'Free team', plan: 'free' });
    const freeToken = await makeToken(server.app, free.teamId);
    const response = await rpc(server.baseUrl, freeToken.value, INITIALIZE);
    expect(response.status).toBe(403);
    expect(response.json().code).toBe('plan_excludes_api');
  });

  it('refuses a token revoked inside an open session on its next request', async () => {
    const revoked = await token();
    const { client, close } = await connectHttp(server.baseUrl, revoked.value);
    expect((await client.callTool({ name: 'get_current_token', arguments: {} })).isError).toBeFalsy();
    await revokeToken(server.app.db.kysely, revoked.id);
    await expect(client.callTool({ name: 'get_current_token', arguments: {} })).rejects.toThrow(/invalid_token/);
    await expect(client.listTools()).rejects.toThrow(/invalid_token/);
    await close();
  });

  it('applies an access change to the next call of the same session', async () => {
    const changing = await token({ permissions: ['services:read'] });
    const { client, close } = await connectHttp(server.baseUrl, changing.value);
    expect((await client.callTool({ name: 'list_erp_services', arguments: {} })).isError).toBeFalsy();
    expect((await client.callTool({ name: 'list_servers', arguments: {} })).isError).toBe(true);

    await server.app.db.kysely.updateTable('api_tokens').set({ permissions: 'servers:read' }).where('id', '=', changing.id).execute();

    const nowDenied = await client.callTool({ name: 'list_erp_services', arguments: {} });
    expect(problemIn(nowDenied)?.code).toBe('missing_permission');
    expect((await client.callTool({ name: 'list_servers', arguments: {} })).isError).toBeFalsy();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('list_servers');
    expect(names).not.toContain('list_erp_services');
    await close();
  });

  it('refuses a session to a second token and keeps serving the token that opened it', async () => {
    const first = await token();
    const second = await token();
    const opened = await connectHttp(server.baseUrl, first.value);
    const sessionId = opened.transport.sessionId!;
    expect(sessionId).toMatch(/^[\w-]+\.[\w-]+$/);

    // A client resuming with a known session id skips initialize and goes straight to requests.
    const intruder = await connectHttp(server.baseUrl, second.value, sessionId);
    await expect(intruder.client.listTools()).rejects.toThrow(/404[\s\S]*not_found/);
    await expect(intruder.client.callTool({ name: 'get_current_token', arguments: {} })).rejects.toThrow(/not_found/);
    const raw = await rpc(server.baseUrl, second.value, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sessionId });
    expect(raw.status).toBe(404);
    expect(raw.json().detail).toContain('belong to the token that opened them');

    const resumed = await connectHttp(server.baseUrl, first.value, sessionId);
    expect((await resumed.client.listTools()).tools.length).toBe(catalog.length);
    const stillServed = await opened.client.callTool({ name: 'get_current_token', arguments: {} });
    expect((stillServed.structuredContent as { id: string }).id).toBe(first.id);
    await Promise.all([opened.close(), resumed.close(), intruder.close()]);
  });

  it('keeps a session when its token gets a new value (an OAuth refresh), and ends it when the token is revoked', async () => {
    const signedIn = await token();
    const opened = await connectHttp(server.baseUrl, signedIn.value);
    const sessionId = opened.transport.sessionId!;
    // What a refresh does to the token row (src/oauth/team-tokens.ts): same row, new value.
    const refreshed = generateTokenValue();
    await replaceTokenValue(server.app.db.kysely, signedIn.id, refreshed, displayParts(refreshed));

    const continued = await connectHttp(server.baseUrl, refreshed, sessionId);
    expect((await continued.client.listTools()).tools.length).toBe(catalog.length);
    const self = await continued.client.callTool({ name: 'get_current_token', arguments: {} });
    expect((self.structuredContent as { id: string }).id).toBe(signedIn.id);
    // The replaced value is refused, session or not.
    expect((await rpc(server.baseUrl, signedIn.value, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sessionId })).status)
      .toBe(401);

    await revokeToken(server.app.db.kysely, signedIn.id);
    await expect(continued.client.listTools()).rejects.toThrow(/invalid_token/);
    await Promise.all([opened.close(), continued.close()]);
  });
});

describe('the /mcp endpoint itself', () => {
  it('refuses a Host that is not a name of this server (DNS rebinding)', async () => {
    const response = await rawRequest(server.baseUrl, {
      headers: { host: `evil.example:${new URL(server.baseUrl).port}`, 'content-type': 'application/json' }, body: JSON.stringify(INITIALIZE),
    });
    expect(response.status).toBe(403);
    expect(response.json().code).toBe('host_not_allowed');
  });

  it('refuses a Host that only a lenient parser reads as loopback, and an empty Host', async () => {
    const port = new URL(server.baseUrl).port;
    const bearer = (await token()).value;
    const body = JSON.stringify(INITIALIZE);
    for (const host of [`2130706433:${port}`, `evil.example@localhost:${port}`, '']) {
      const response = await sendRawHttp(server.baseUrl, `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${bearer}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\n\r\n${body}`);
      expect(response.status, host).toBe(403);
      expect(JSON.parse(response.body).code, host).toBe('host_not_allowed');
    }
  });

  it('refuses a request from a web page of another site (Origin)', async () => {
    const response = await rpc(server.baseUrl, (await token()).value, INITIALIZE, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(response.json().detail).toContain('https://evil.example');
  });

  it('accepts a request whose Origin is this machine', async () => {
    const response = await rpc(server.baseUrl, (await token()).value, INITIALIZE, { origin: 'http://localhost:3000' });
    expect(response.status).toBe(200);
  });

  it('carries the RateLimit headers on successful answers, in JSON and over SSE, as REST does', async () => {
    const bearer = (await token()).value;
    const json = await rpc(server.baseUrl, bearer, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const sse = await rpc(server.baseUrl, bearer, {
      jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_current_token', arguments: {}, _meta: { progressToken: 'p' } },
    });
    for (const [answer, response] of [['json', json], ['sse', sse]] as const) {
      expect(response.status, answer).toBe(200);
      expect(response.headers['ratelimit-policy'], answer).toMatch(/^"per-token";q=\d+;w=\d+$/);
      expect(response.headers.ratelimit, answer).toMatch(/^"per-token";r=\d+;t=\d+$/);
    }
  });

  it('answers GET and DELETE with 405, since the endpoint keeps no session state', async () => {
    const bearer = (await token()).value;
    for (const method of ['GET', 'DELETE']) {
      const response = await rawRequest(server.baseUrl, { method, headers: { authorization: `Bearer ${bearer}`, accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.allow).toBe('POST');
    }
  });
});
