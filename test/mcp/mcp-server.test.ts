// The MCP server seam on its own, over the SDK's in-memory transport: a capability that fails
// inside gives the generic sentence only (never the stack or SQL), while our logs get the cause.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, defaultConfig, type App } from '../../src/app.js';
import { defineCapability, type Capability } from '../../src/core/capability.js';
import { INTERNAL_ERROR_SENTENCE, type AppError } from '../../src/core/errors.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';
import { buildToolCatalog } from '../../src/mcp/tool-definitions.js';
import { makeToken, seedTeam, tempDataDir } from '../support/fixtures.js';
import { problemIn, textOf } from './clients.js';

const SECRET_CAUSE = 'SQLITE_ERROR: no such table: secret_ledger (at /srv/teaminfra/src/db/ledger.ts:42)';

const exploding = defineCapability({
  name: 'explode_for_test', title: 'Fails inside', description: 'A capability whose handler throws.',
  permission: 'services:read', target: { kind: 'team' }, input: () => z.strictObject({}), output: () => z.object({ ok: z.boolean() }),
  http: { method: 'GET', path: '/api/explode', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false }, errors: [],
  run: async () => { throw new Error(SECRET_CAUSE); },
}) as unknown as Capability;

let app: App | undefined;
afterEach(async () => { await app?.close(); app = undefined; });

async function connected(bearer: string, reported: AppError[]) {
  const server = createMcpServer(buildToolCatalog([exploding]), { ...app!, onInternalError: (error) => reported.push(error) }, bearer);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'teaminfra-tests', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('createMcpServer', () => {
  it('answers an internal failure with the generic sentence only, and reports the cause to our logs', async () => {
    app = createApp(defaultConfig(tempDataDir()));
    const team = await seedTeam(app);
    const reported: AppError[] = [];
    const client = await connected((await makeToken(app, team.teamId)).value, reported);
    const result = await client.callTool({ name: 'explode_for_test', arguments: {} });
    await client.close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`internal: ${INTERNAL_ERROR_SENTENCE}`);
    expect(problemIn(result)).toMatchObject({ code: 'internal', status: 500, detail: INTERNAL_ERROR_SENTENCE });
    expect(JSON.stringify(result)).not.toMatch(/SQLITE|secret_ledger|ledger\.ts/);
    expect(reported.map((error) => error.internalReason)).toEqual([`Error: ${SECRET_CAUSE}`]);
  });

  it('answers tools/list with a JSON-RPC error carrying the code and sentence when the token is refused', async () => {
    app = createApp(defaultConfig(tempDataDir()));
    const team = await seedTeam(app);
    const restOnly = await makeToken(app, team.teamId, { acceptedBy: 'api' });
    const client = await connected(restOnly.value, []);
    const refusal = await client.listTools().catch((error: unknown) => error);
    await client.close();
    expect(refusal).toMatchObject({ code: -32600, data: { code: 'channel_not_accepted', status: 403 } });
    expect(String((refusal as Error).message)).toContain('channel_not_accepted: This API token is accepted only by the REST API');
  });
});
