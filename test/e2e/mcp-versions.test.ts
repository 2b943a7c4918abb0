// Both protocol versions from the one seam, black-box: the SDK's v1 Client (MCP 2025-11-25, opened
// by initialize) and its v2 Client pinned to MCP 2026-07-28 (no initialize, server/discover, the
// version and capabilities on every request), each over streamable HTTP and over stdio, against
// the same server and the same data. Every one must see the same tools, answers and refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expandPermissions } from '../../src/auth/permissions.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { catalog } from '../../tools/index.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectHttp, connectStdio, problemIn, textOf } from '../mcp/clients.js';
import { connectModernHttp, connectModernStdio } from '../mcp/clients-v2.js';

let server: TestServer;
let team: SeededTeam;

const waitSeconds = process.env.TEAMINFRA_MCP_WAIT_SECONDS;
beforeAll(async () => {
  // Long actions wait for their operation (in this process over HTTP; stdio children inherit it).
  process.env.TEAMINFRA_MCP_WAIT_SECONDS = '30';
  server = await startTestServer({ engine: { pollMs: 50, reconcileIntervalMs: 200 } }, {}, { engine: true });
  team = await seedTeam(server.app);
});
afterAll(async () => {
  process.env.TEAMINFRA_MCP_WAIT_SECONDS = waitSeconds;
  await server.close();
});

interface Session {
  protocol: string | undefined;
  listNames(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, onProgress?: (message: string) => void): Promise<CallToolResult>;
  close(): Promise<void>;
}

const channels: { label: string; open(token: string): Promise<Session> }[] = [
  {
    label: 'the v1 client (2025-11-25) over streamable HTTP',
    open: async (token) => v1Session(await connectHttp(server.baseUrl, token)),
  },
  {
    label: 'the v1 client (2025-11-25) over stdio',
    open: async (token) => v1Session(await connectStdio(server.dataDir, token, server.databaseUrl)),
  },
  {
    label: 'the v2 client (2026-07-28) over streamable HTTP',
    open: async (token) => v2Session(await connectModernHttp(server.baseUrl, token)),
  },
  {
    label: 'the v2 client (2026-07-28) over stdio',
    open: async (token) => v2Session(await connectModernStdio(server.dataDir, token, { databaseUrl: server.databaseUrl })),
  },
];

function v1Session({ client, transport, close }: Awaited<ReturnType<typeof connectHttp>> | Awaited<ReturnType<typeof connectStdio>>): Session {
  return {
    // The HTTP transport keeps the version initialize agreed on; the stdio one does not say.
    protocol: (transport as { protocolVersion?: string }).protocolVersion ?? 'initialize',
    listNames: async () => (await client.listTools()).tools.map((tool) => tool.name).sort(),
    call: async (name, args, onProgress) => await client.callTool({ name, arguments: args }, undefined,
      onProgress ? { onprogress: (progress) => onProgress(progress.message ?? '') } : undefined) as CallToolResult,
    close,
  };
}

function v2Session({ client, close }: Awaited<ReturnType<typeof connectModernHttp>>): Session {
  return {
    protocol: client.getProtocolEra(),
    listNames: async () => (await client.listTools()).tools.map((tool) => tool.name).sort(),
    call: async (name, args, onProgress) => await client.callTool({ name, arguments: args },
      onProgress ? { onprogress: (progress) => onProgress(progress.message ?? '') } : undefined) as CallToolResult,
    close,
  };
}

const token = (options: Parameters<typeof makeToken>[2] = {}) => makeToken(server.app, team.teamId, options);

describe.each(channels)('MCP with $label', ({ label, open }) => {
  it('speaks the version the client asked for', async () => {
    const session = await open((await token()).value);
    await session.close();
    const expected = label.includes('2026-07-28') ? 'modern' : label.includes('HTTP') ? '2025-11-25' : 'initialize';
    expect(session.protocol).toBe(expected);
  });

  it('lists only the tools the token may call', async () => {
    const session = await open((await token({ permissions: ['services:read'] })).value);
    const names = await session.listNames();
    await session.close();
    const held = expandPermissions(['services:read']);
    expect(names).toEqual(catalog.filter((c) => c.permission === null || held.has(c.permission)).map((c) => c.name).sort());
  });

  it('answers a call with structuredContent and the same JSON as text', async () => {
    const session = await open((await token()).value);
    const result = await session.call('list_erp_services', {});
    await session.close();
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { data: { id: string }[] }).data.map((service) => service.id)).toEqual(team.serviceIds);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('refuses a call without the permission with our code and sentence', async () => {
    const session = await open((await token({ permissions: ['services:read'] })).value);
    const result = await session.call('list_servers', {});
    await session.close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('missing_permission: This API token does not have the servers:read scope.');
    expect(problemIn(result)).toMatchObject({ code: 'missing_permission', status: 403 });
  });

  it('reports progress of a long action and returns its operation when it ends', async () => {
    const session = await open((await token({ permissions: ['services:operate'] })).value);
    const progress: string[] = [];
    const stopped = await session.call('stop_erp_service', { service_id: team.serviceIds[1] }, (message) => progress.push(message));
    const started = await session.call('start_erp_service', { service_id: team.serviceIds[1] }, (message) => progress.push(message));
    await session.close();
    expect(stopped.structuredContent).toMatchObject({ kind: 'stop', state: 'succeeded' });
    expect(started.structuredContent).toMatchObject({ kind: 'start', state: 'succeeded' });
    // Each change is told; the last one may reach a client after the result it preceded (a client
    // reading both from one stdio chunk handles the response first), so only the changes seen are checked.
    expect(progress.length).toBeGreaterThan(0);
    for (const message of progress) expect(message).toMatch(/^Operation op_\w+ is (running|succeeded)\.$/);
  });

  it('applies a permission change and a revocation to the next request', async () => {
    const changing = await token({ permissions: ['services:read'] });
    const session = await open(changing.value);
    expect((await session.call('list_erp_services', {})).isError).toBeFalsy();
    await server.app.db.kysely.updateTable('api_tokens').set({ permissions: 'servers:read' }).where('id', '=', changing.id).execute();
    expect(problemIn(await session.call('list_erp_services', {}))?.code).toBe('missing_permission');
    expect((await session.call('list_servers', {})).isError).toBeFalsy();
    expect(await session.listNames()).toContain('list_servers');
    await revokeToken(server.app.db.kysely, changing.id);
    const revoked = await session.call('list_servers', {}).catch((error: unknown) => error);
    await session.close().catch(() => undefined);
    // Over HTTP the bearer is refused before any tool runs (401); over stdio the call is an isError result.
    const refusedCode = problemIn(revoked)?.code ?? String((revoked as Error).message);
    expect(refusedCode).toMatch(/revoked|401|invalid_token|unauthorized/i);
  });
});
