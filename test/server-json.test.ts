// server.json, the description of this MCP server for the MCP registry: valid by the rules of
// the registry's format it names (test/support/mcp-registry/server-json-rules.ts), and true to the
// server, which says the same name and version in server/discover and serves MCP where it says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';
import { MCP_PATH } from '../src/mcp/http-transport.js';
import { makeToken, seedTeam, startTestServer, type TestServer } from './support/fixtures.js';
import { rpc } from './mcp/clients.js';
import { SCHEMA_ID, serverJsonRules } from './support/mcp-registry/server-json-rules.js';

const read = (path: string) => JSON.parse(readFileSync(join(packageRoot, path), 'utf8')) as Record<string, any>;
const serverJson = read('server.json');

describe('server.json', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer(); });
  afterAll(async () => { await server.close(); });

  it('follows the rules of the MCP registry\'s server.json format, whose schema it names', () => {
    const checked = serverJsonRules.safeParse(serverJson);
    expect(checked.success, JSON.stringify(checked.error?.issues, null, 2)).toBe(true);
    expect(serverJson.$schema).toBe(SCHEMA_ID);
  });

  it('would be refused without a version, with a name without a namespace, or with a description over 100 characters', () => {
    const { version: _version, ...withoutVersion } = serverJson;
    expect(serverJsonRules.safeParse(withoutVersion).success).toBe(false);
    expect(serverJsonRules.safeParse({ ...serverJson, name: 'teaminfra' }).success).toBe(false);
    expect(serverJsonRules.safeParse({ ...serverJson, description: 'x'.repeat(101) }).success).toBe(false);
  });

  it('names the version and name that server/discover answers with, and the /mcp endpoint', async () => {
    const team = await seedTeam(server.app);
    const token = (await makeToken(server.app, team.teamId)).value;
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const response = await rpc(server.baseUrl, token, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
    const serverInfo = response.json().result._meta['io.modelcontextprotocol/serverInfo'] as { name: string; version: string };
    expect(serverJson.version).toBe(serverInfo.version);
    expect(serverJson.version).toBe(read('package.json').version);
    expect(serverJson.name.split('/')[1]).toBe(serverInfo.name);
    expect(serverJson.remotes.map((remote: { url: string }) => remote.url)).toEqual([`{base_url}${MCP_PATH}`]);
  });
});
