// server.json, the description of this MCP server for the MCP registry: valid by the registry's
// own schema (committed in test/support/mcp-registry with where it came from), and true to the
// server, which says the same name and version in server/discover and serves MCP where it says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/package-root.js';
import { MCP_PATH } from '../src/mcp/http-transport.js';
import { makeToken, seedTeam, startTestServer, type TestServer } from './support/fixtures.js';
import { rpc } from './mcp/clients.js';

const read = (path: string) => JSON.parse(readFileSync(join(packageRoot, path), 'utf8')) as Record<string, any>;
const serverJson = read('server.json');
const schema = read('test/support/mcp-registry/server.schema.json');

function validator() {
  // strict: false, for the schema's own "example" annotations, which JSON Schema does not define.
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  return ajv.compile(schema);
}

describe('server.json', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer(); });
  afterAll(async () => { await server.close(); });

  it('is valid by the MCP registry\'s server.json schema, which it names', () => {
    const validate = validator();
    expect(validate(serverJson), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(serverJson.$schema).toBe(schema.$id);
  });

  it('is refused by that schema when it lacks a version or has a name without a namespace', () => {
    const validate = validator();
    const { version: _version, ...withoutVersion } = serverJson;
    expect(validate(withoutVersion)).toBe(false);
    expect(validate({ ...serverJson, name: 'teaminfra' })).toBe(false);
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
