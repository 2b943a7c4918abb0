// `teaminfra mcp` over stdio, black-box: the compiled command started exactly as the stdio entry
// of mcp.config.json says (placeholders filled in), spoken to by the SDK's own Client, against
// the data directory of a running test server so REST answers can be compared.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateInTimeZone } from '../../src/auth/expiry.js';
import { expandPermissions } from '../../src/auth/permissions.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { codeCacheFileOf } from '../../src/cli/code-cached-script.js';
import { MCP_BUNDLE, mcpBundleIsCurrent, SHARED_WITH_BUNDLE } from '../../src/cli/mcp-module.js';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { catalog } from '../../tools/index.js';
import { CLI, runCli } from '../support/cli.js';
import { getJson, makeToken, seedTeam, startTestServer, tempDataDir, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectStdio, problemIn, readConfig, ROOT_PLACEHOLDER, stdioTransport, textOf, TOKEN_PLACEHOLDER } from '../mcp/clients.js';

let server: TestServer;
let team: SeededTeam;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
});
afterAll(async () => { await server.close(); });

/** A 2026-07-28 request's own version and capabilities. */
const MODERN_META = { [PROTOCOL_VERSION_META_KEY]: '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

const token = (options: Parameters<typeof makeToken>[2] = {}) => makeToken(server.app, team.teamId, options);
/** The test server's database, for `teaminfra mcp` started by hand (SQLite: its data directory is enough). */
const databaseArgs = () => (server.databaseUrl ? ['--database-url', server.databaseUrl] : []);

/**
 * `teaminfra mcp` spoken to by hand, line by line: writes `lines`, waits for the answer whose id
 * is `lastId`, closes stdin; what it wrote on stdout (one line per message) and its exit code.
 */
async function rawStdio(lines: string[], lastId: number, options: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'mcp', '--data-dir', server.dataDir, ...databaseArgs()], {
    env: { ...process.env, TEAMINFRA_TOKEN: (await token()).value, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  const answered = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (stdout.includes(`"id":${lastId}`)) resolve();
  }));
  for (const line of lines) child.stdin.write(line + '\n');
  await answered;
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { lines: stdout.trim().split('\n'), code };
}

describe('mcp.config.json', () => {
  it('has one stdio entry and one streamable-HTTP entry with placeholders, under mcpServers', () => {
    const entries = Object.values(readConfig().mcpServers);
    expect(entries.map((entry) => entry.type).sort()).toEqual(['http', 'stdio']);
    const stdio = entries.find((entry) => entry.type === 'stdio')!;
    const http = entries.find((entry) => entry.type === 'http')!;
    expect(stdio).toMatchObject({
      command: 'node',
      args: [`${ROOT_PLACEHOLDER}/dist/src/cli/main.js`, 'mcp', '--data-dir', `${ROOT_PLACEHOLDER}/data`],
      env: { TEAMINFRA_TOKEN: TOKEN_PLACEHOLDER },
    });
    expect(http).toMatchObject({ url: expect.stringMatching(/^http:\/\/[^/]+\/mcp$/), headers: { Authorization: `Bearer ${TOKEN_PLACEHOLDER}` } });
  });
});

describe('teaminfra mcp over stdio', () => {
  it('lists every capability to a full-access token', async () => {
    const { client, close } = await connectStdio(server.dataDir, (await token()).value, server.databaseUrl);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    await close();
    expect(names).toEqual(catalog.map((capability) => capability.name).sort());
  });

  it('lists each tool exactly as the catalog computes it, though the bundle took them from the build (src/mcp/prebuilt-tools.ts)', async () => {
    for (const [protocolVersion, era] of [['2025-11-25', 'legacyTool'], ['2026-07-28', 'tool']] as const) {
      const meta = protocolVersion === '2026-07-28' ? { params: { _meta: MODERN_META } } : {};
      const opening = protocolVersion === '2026-07-28' ? [] : [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })];
      const { lines } = await rawStdio([...opening, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', ...meta })], 2);
      const listed = lines.map((line) => JSON.parse(line) as { id: number; result?: { tools: unknown[] } }).find((answer) => answer.id === 2)?.result?.tools;
      expect(listed, protocolVersion).toEqual(buildToolCatalog(catalog).definitions.map((definition) => definition[era]));
    }
  });

  it('lists only the services:read tools and get_current_token to a services:read token', async () => {
    const { client, close } = await connectStdio(server.dataDir, (await token({ permissions: ['services:read'] })).value, server.databaseUrl);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    await close();
    const held = expandPermissions(['services:read']);
    expect(names).toEqual(catalog.filter((c) => c.permission === null || held.has(c.permission)).map((c) => c.name).sort());
    expect(names).toContain('get_current_token');
    expect(names).not.toContain('list_servers');
  });

  it('returns the same data as REST for a successful call', async () => {
    const reader = await token({ permissions: ['services:read'] });
    const { client, close } = await connectStdio(server.dataDir, reader.value, server.databaseUrl);
    const result = await client.callTool({ name: 'list_erp_services', arguments: {} });
    await close();
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual((await getJson(server.baseUrl, '/api/service-erp', reader.value)).body);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('reads a service\'s logs and metrics as REST does, loading the engine\'s client on that first call', async () => {
    const observer = await token({ permissions: ['services:read', 'services:logs'] });
    const { client, close } = await connectStdio(server.dataDir, observer.value, server.databaseUrl);
    const path = `/api/service-erp/${team.serviceIds[0]}`;
    const logs = await client.callTool({ name: 'get_erp_service_logs', arguments: { service_id: team.serviceIds[0], tail: 10 } });
    const metrics = await client.callTool({ name: 'get_erp_service_metrics', arguments: { service_id: team.serviceIds[0] } });
    await close();
    expect(logs.structuredContent).toEqual((await getJson(server.baseUrl, `${path}/logs?tail=10`, observer.value)).body);
    expect(metrics.structuredContent).toEqual((await getJson(server.baseUrl, `${path}/metrics`, observer.value)).body);
    expect(metrics.structuredContent).toMatchObject({ state: 'stopped', running: false, cpu: null });
  });

  it('refuses every kind of denial with the code and sentence REST gives', async () => {
    const limited = await token({ permissions: ['services:write'], services: [team.serviceIds[1]] });
    const { client, close } = await connectStdio(server.dataDir, limited.value, server.databaseUrl);
    const missing = await client.callTool({ name: 'list_servers', arguments: {} });
    const outOfReach = await client.callTool({ name: 'get_erp_service', arguments: { service_id: team.serviceIds[0] } });
    const cannotCreate = await client.callTool({ name: 'create_erp_service', arguments: { server_id: team.serverIds[1], name: 'x' } });
    await close();
    const rest = (path: string, body?: unknown) => fetch(server.baseUrl + path, {
      method: body ? 'POST' : 'GET',
      headers: { Accept: 'application/json', Authorization: `Bearer ${limited.value}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    }).then((response) => response.json());
    expect(textOf(missing)).toBe('missing_permission: This API token does not have the servers:read scope.');
    expect(problemIn(missing)).toEqual(await rest('/api/servers'));
    expect(problemIn(outOfReach)?.code).toBe('not_found');
    expect(problemIn(outOfReach)).toEqual(await rest(`/api/service-erp/${team.serviceIds[0]}`));
    expect(problemIn(cannotCreate)?.code).toBe('restricted_token_cannot_create');
    expect(problemIn(cannotCreate)).toEqual(await rest('/api/service-erp', { server_id: team.serverIds[1], name: 'x' }));
  });

  it('refuses a token-management tool with a sentence pointing to the API Tokens page', async () => {
    const { client, close } = await connectStdio(server.dataDir, (await token()).value, server.databaseUrl);
    const result = await client.callTool({ name: 'update_token_permissions', arguments: { permissions: ['services:write'] } });
    await close();
    expect(problemIn(result)?.code).toBe('token_management_not_available');
    expect(textOf(result)).toContain('API Tokens page of the panel');
  });

  it('applies an access change to the next call of the running process', async () => {
    const changing = await token({ permissions: ['services:read'] });
    const { client, close } = await connectStdio(server.dataDir, changing.value, server.databaseUrl);
    expect((await client.callTool({ name: 'list_servers', arguments: {} })).isError).toBe(true);
    await server.app.db.kysely.updateTable('api_tokens').set({ permissions: 'servers:read' }).where('id', '=', changing.id).execute();
    expect((await client.callTool({ name: 'list_servers', arguments: {} })).isError).toBeFalsy();
    expect(problemIn(await client.callTool({ name: 'list_erp_services', arguments: {} }))?.code).toBe('missing_permission');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('list_servers');
    await close();
  });

  it('refuses a token revoked while the process runs, on its next request', async () => {
    const revoked = await token();
    const { client, close } = await connectStdio(server.dataDir, revoked.value, server.databaseUrl);
    expect((await client.callTool({ name: 'get_current_token', arguments: {} })).isError).toBeFalsy();
    await revokeToken(server.app.db.kysely, revoked.id);
    const refused = await client.callTool({ name: 'get_current_token', arguments: {} });
    expect(problemIn(refused)?.code).toBe('invalid_token');
    await expect(client.listTools()).rejects.toThrow(/invalid_token/);
    await close();
  });

  it('refuses a REST-only token before serving anything, with the reason on stderr', async () => {
    const restOnly = await token({ acceptedBy: 'api' });
    const transport = stdioTransport(server.dataDir, restOnly.value, server.databaseUrl);
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk; });
    const client = new Client({ name: 'teaminfra-tests', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(stderr).toContain('accepted only by the REST API and command line, not by the MCP server');
  });

  it('answers a malformed line, keeps serving, and writes nothing but JSON-RPC to stdout', async () => {
    const { lines, code } = await rawStdio([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      '{"jsonrpc": "2.0", "id": 2, "method": tools/list}',
      '{"not": "json-rpc"}',
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    ], 3);
    expect(code).toBe(0);
    const answers = lines.map((line) => JSON.parse(line) as { id: number | null; error?: { code: number } });
    // An error for a line whose id cannot be read has id null (JSON-RPC 2.0), which SDK 1.x's message schema leaves out.
    for (const answer of answers) {
      if (answer.id === null) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
      else expect(JSONRPCMessageSchema.safeParse(answer).success, JSON.stringify(answer)).toBe(true);
    }
    expect(answers.map((answer) => answer.id).sort()).toEqual([1, 3, null, null]);
    expect(answers.filter((answer) => answer.id === null).map((answer) => answer.error?.code).sort()).toEqual([-32600, -32700]);
  });
});

describe('teaminfra mcp at start', () => {
  // What an assistant waits for when it starts the server: only what answering needs is loaded.
  // These belong to `serve` (HTTP, panel, sign-in, mail catcher) or to a Docker engine.
  const NOT_NEEDED = ['fastify', 'undici', 'tar-stream', 'smtp-server', 'mailparser', 'oidc-provider', 'swagger-ui-dist', 'pg', 'yaml'];

  async function modulesLoaded(): Promise<string[]> {
    const log = join(tempDataDir(), 'modules.txt');
    await rawStdio([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    ], 2, { nodeArgs: ['--import', join(import.meta.dirname, '../support/module-log-hook.mjs')], env: { TEAMINFRA_TEST_MODULE_LOG: log } });
    return readFileSync(log, 'utf8').split('\n').filter((url) => url !== '');
  }
  const packagesOf = (urls: string[]) => new Set(urls
    .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined));

  it('loads none of the HTTP server, sign-in, mail catcher, YAML parser or Docker engine client to answer tools/list', async () => {
    const urls = await modulesLoaded();
    // Kysely's values come from its CommonJS build (src/db/kysely-runtime.ts) or the bundle: its ESM build is 262 modules to link.
    expect(urls.filter((url) => url.includes('/node_modules/kysely/dist/esm/'))).toEqual([]);
    const packages = packagesOf(urls);
    // pg: the test may run on PostgreSQL, where loading it is right.
    expect([...packages].filter((name) => NOT_NEEDED.includes(name) && !(name === 'pg' && server.databaseUrl))).toEqual([]);
  });

  it("runs from the one-file bundle that the build makes (scripts/bundle-mcp.mjs), with Kysely, zod, the SDK and better-sqlite3's JavaScript inside it", async () => {
    // npm test builds it (pretest), and so does the tests' global setup after a bare tsc (test/support/mcp-bundle-setup.ts).
    expect(mcpBundleIsCurrent(), 'dist/mcp/teaminfra-mcp.cjs is missing or older than dist/src: run "npm run build"').toBe(true);
    const urls = await modulesLoaded();
    // The bundle runs as a script with its code cache (src/cli/code-cached-script.ts), which the
    // module log does not list: beside what main.js loads itself, nothing of dist/src is loaded.
    expect(urls.filter((url) => url.includes('/dist/src/')).map((url) => url.replace(/^.*\/dist\/src\//, '')).sort())
      .toEqual(['cli/code-cached-script.js', 'cli/main.js', 'cli/mcp-module.js', 'cli/usage.js', 'package-root.js']);
    // better-sqlite3's loader of its addon is required from the package (CommonJS, which this log does not list).
    expect([...packagesOf(urls)].filter((name) => ['kysely', 'zod', '@modelcontextprotocol/server', '@modelcontextprotocol/core', 'better-sqlite3'].includes(name))).toEqual([]);
    // Once a start has answered tools/list, the code cache of that start is beside the bundle.
    expect(existsSync(codeCacheFileOf(MCP_BUNDLE))).toBe(true);
    // What it requires of ours is handed main's instances (mcp-module.ts): any other would be a second copy.
    const required = [...readFileSync(MCP_BUNDLE, 'utf8').matchAll(/require\("(\.\.\/[^"]+)"\)/g)].map((match) => match[1]);
    expect([...new Set(required)].sort()).toEqual(Object.keys(SHARED_WITH_BUNDLE).sort());
  });

  it("carries only the SDK's protocol schemas it uses, not every one @modelcontextprotocol/core defines (scripts/pure-schema-builders.mjs)", () => {
    const bundle = readFileSync(MCP_BUNDLE, 'utf8');
    // Those it validates with: the requests it screens (src/mcp/request-screen.ts) and any JSON-RPC message (rpc-errors.ts).
    for (const used of ['InitializeRequestSchema', 'CallToolRequestSchema', 'JSONRPCMessageSchema']) expect(bundle).toContain(`const ${used} = `);
    // OAuth's, OpenID's, sampling's: built at every start before, used by nothing the command runs.
    for (const unused of ['OAuthMetadataSchema', 'OpenIdProviderMetadataSchema', 'CreateMessageRequestSchema']) expect(bundle).not.toContain(`const ${unused} = `);
  });
});

describe('teaminfra mcp and malformed requests', () => {
  it('answers -32602 with a sentence when a tools/call has no tool name, and keeps serving', async () => {
    const { lines } = await rawStdio([
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ].map((message) => JSON.stringify(message)), 3);
    const answers = lines.map((line) => JSON.parse(line) as { id: number; error?: object; result?: object });
    expect(answers.find((answer) => answer.id === 2)?.error)
      .toEqual({ code: -32602, message: 'Invalid tools/call request: params.name is missing; it must be a string.' });
    expect(answers.find((answer) => answer.id === 3)?.result).toBeDefined();
  });

  it('answers -32700 when a line is not JSON, where it said nothing before', async () => {
    const { lines } = await rawStdio(['{"jsonrpc": "2.0", "id": 1, "method": ', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: MODERN_META } })], 2);
    expect(lines.map((line) => JSON.parse(line)).find((answer) => answer.id === null))
      .toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON.' } });
  });

  it('answers -32600 with the request id when a line is JSON but not a JSON-RPC request', async () => {
    const { lines } = await rawStdio([JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'tools/list' }), JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'server/discover', params: { _meta: MODERN_META } })], 8);
    expect(lines.map((line) => JSON.parse(line)).find((answer) => answer.id === 7)?.error).toMatchObject({ code: -32600 });
  });

  it('answers -32022 naming the versions to choose from when a request names a version it does not serve, after initialize too', async () => {
    const { lines } = await rawStdio([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: { ...MODERN_META, [PROTOCOL_VERSION_META_KEY]: '2099-01-01' } } }),
    ], 2);
    expect(lines.map((line) => JSON.parse(line)).find((answer) => answer.id === 2)?.error).toMatchObject({
      code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' },
    });
  });
});

describe('teaminfra mcp refusing to start', () => {
  function yesterdayUtc(): string {
    const date = new Date(`${dateInTimeZone(new Date(), 'UTC')}T12:00:00Z`);
    date.setUTCDate(date.getUTCDate() - 1);
    return date.toISOString().slice(0, 10);
  }

  const cases: [string, () => Promise<string | undefined>, RegExp][] = [
    ['TEAMINFRA_TOKEN is missing', async () => undefined, /TEAMINFRA_TOKEN is not set/],
    ['the token is malformed', async () => 'tinf_not-a-token', /refused: The API token is missing, malformed, unknown, revoked or expired/],
    ['the token is expired', async () => (await token({ expiresOn: yesterdayUtc() })).value, /refused: The API token is .*expired/],
    ['the token is accepted by the REST API only', async () => (await token({ acceptedBy: 'api' })).value, /not by the MCP server for AI assistants/],
  ];
  for (const [condition, bearer, sentence] of cases) {
    it(`exits non-zero with a sentence on stderr and nothing on stdout when ${condition}`, async () => {
      const value = await bearer();
      const result = await runCli(['mcp', '--data-dir', server.dataDir, ...databaseArgs()], { env: { TEAMINFRA_TOKEN: value ?? '' } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(sentence);
      expect(result.stdout).toBe('');
    });
  }

  it('exits non-zero when the data directory has no database, instead of creating an empty one', async () => {
    const empty = tempDataDir();
    const result = await runCli(['mcp', '--data-dir', empty], { env: { TEAMINFRA_TOKEN: (await token()).value } });
    rmSync(empty, { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`There is no teaminfra database in ${empty}`);
  });
});
