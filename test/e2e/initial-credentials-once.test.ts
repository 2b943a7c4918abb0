// A created service's initial credentials are shown once (issue 37): the first answer that shows
// the succeeded create operation to the token that created the service carries them (REST get,
// MCP get_operation, the MCP action tool's own wait, a task's result), then the row holds only a
// sentence saying when and where they were shown; a list never carries them, and of many readers
// at the same moment exactly one gets them. Black-box over REST and MCP, on SQLite and PostgreSQL.
// The create operations are real rows whose end is written as the engine writes it (their
// sealed credentials in `result`), so no engine has to run an app here; the Tryton suites
// (test/engine/docker) do it for real.
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../src/db/ids.js';
import { sealInitialCredentials } from '../../src/engine/apps/initial-credentials.js';
import { taskHandleKeys, taskIdOf } from '../../src/mcp/task-handles.js';
import { getJson, makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectHttp } from '../mcp/clients.js';

let server: TestServer;
let team: SeededTeam;
let creator: { id: string; value: string };
let other: { id: string; value: string };
const originalWait = process.env.TEAMINFRA_MCP_WAIT_SECONDS;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  creator = await makeToken(server.app, team.teamId, { name: 'creator' });
  other = await makeToken(server.app, team.teamId, { name: 'other' });
});
afterEach(() => { process.env.TEAMINFRA_MCP_WAIT_SECONDS = originalWait; });
afterAll(async () => { await server.close(); });

const SHOWN = /^The initial credentials were shown once, at \d{4}-\d\d-\d\dT[\d:.]+Z, in the answer of (\w+) over (REST|MCP), and are kept nowhere since\.$/;

async function createService(token: string, name: string): Promise<{ operationId: string; serviceId: string }> {
  const response = await fetch(`${server.baseUrl}/api/service-erp`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ server_id: team.serverIds[0], name }),
  });
  expect(response.status).toBe(202);
  const body = await response.json() as { id: string; service_id: string };
  return { operationId: body.id, serviceId: body.service_id };
}

/** Ends the create as the engine does for an app with an admin login: succeeded, its credentials sealed in the result. */
async function succeedWithCredentials(operationId: string, serviceId: string, password: string): Promise<void> {
  const result = JSON.stringify({ initial_credentials: sealInitialCredentials(server.app.secrets, serviceId, { login: 'admin', password }) });
  await server.app.db.kysely.updateTable('operations').set({ state: 'succeeded', result, started_at: nowIso(), finished_at: nowIso() })
    .where('id', '=', operationId).execute();
}

async function createdWithCredentials(name: string, password: string) {
  const created = await createService(creator.value, name);
  await succeedWithCredentials(created.operationId, created.serviceId, password);
  return created;
}

async function storedResult(operationId: string): Promise<string | null> {
  return (await server.app.db.kysely.selectFrom('operations').select('result').where('id', '=', operationId).executeTakeFirstOrThrow()).result;
}

const listedResult = async (token: string, operationId: string) =>
  ((await getJson(server.baseUrl, '/api/operations?limit=200', token)).body.data as { id: string; result: unknown }[])
    .find((each) => each.id === operationId)?.result;

describe('GET /api/operations/{operation_id} of a create with initial credentials', () => {
  it('gives them in the first answer only, then a sentence saying when and where, and never in a list', async () => {
    const { operationId } = await createdWithCredentials('Once', 'first-login-secret-1');
    expect(await listedResult(creator.value, operationId)).toBeNull();
    expect((await getJson(server.baseUrl, `/api/operations/${operationId}`, other.value)).body.result).toBeNull();

    const first = await getJson(server.baseUrl, `/api/operations/${operationId}`, creator.value);
    expect(first.status).toBe(200);
    expect(first.body.result).toEqual({ initial_credentials: { login: 'admin', password: 'first-login-secret-1' } });

    const second = await getJson(server.baseUrl, `/api/operations/${operationId}`, creator.value);
    expect(second.body.state).toBe('succeeded');
    expect(Object.keys(second.body.result)).toEqual(['initial_credentials_shown']);
    expect(second.body.result.initial_credentials_shown).toMatch(SHOWN);
    expect(SHOWN.exec(second.body.result.initial_credentials_shown)!.slice(1)).toEqual(['get_operation', 'REST']);
    expect(await listedResult(creator.value, operationId)).toEqual(second.body.result);
    expect(await listedResult(other.value, operationId)).toBeNull();
    expect((await getJson(server.baseUrl, `/api/operations/${operationId}`, other.value)).body.result).toBeNull();

    // Erased from storage: nothing sealed is left to open with the key.
    const stored = await storedResult(operationId);
    expect(stored).not.toContain('initial_credentials"');
    expect(stored).not.toContain('tsec1:');
    expect(JSON.parse(stored!)).toEqual({ initial_credentials_shown: second.body.result.initial_credentials_shown });
  });

  it('gives them to exactly one of many answers asked at the same moment, over REST and MCP', async () => {
    const { operationId } = await createdWithCredentials('Raced', 'first-login-secret-2');
    const mcp = await Promise.all([1, 2, 3].map(() => connectHttp(server.baseUrl, creator.value)));
    const answers: Record<string, unknown>[] = await Promise.all([
      ...Array.from({ length: 12 }, async () => (await getJson(server.baseUrl, `/api/operations/${operationId}`, creator.value)).body.result as Record<string, unknown>),
      ...mcp.map(async ({ client }) => ((await client.callTool({ name: 'get_operation', arguments: { operation_id: operationId } })).structuredContent as { result: Record<string, unknown> }).result),
    ]);
    for (const connection of mcp) await connection.close();
    const given = answers.filter((result) => result.initial_credentials !== undefined);
    expect(given).toEqual([{ initial_credentials: { login: 'admin', password: 'first-login-secret-2' } }]);
    const sentences = new Set(answers.filter((result) => !given.includes(result)).map((result) => result.initial_credentials_shown));
    expect(sentences.size).toBe(1);
    expect([...sentences][0]).toMatch(SHOWN);
  });
});

describe('get_operation over MCP of a create with initial credentials', () => {
  it('gives them once, then says they were shown over MCP', async () => {
    const { operationId } = await createdWithCredentials('Over MCP', 'first-login-secret-3');
    const { client, close } = await connectHttp(server.baseUrl, creator.value);
    const read = async () => ((await client.callTool({ name: 'get_operation', arguments: { operation_id: operationId } })).structuredContent as { result: Record<string, string> }).result;
    expect(await read()).toEqual({ initial_credentials: { login: 'admin', password: 'first-login-secret-3' } });
    const after = await read();
    expect(SHOWN.exec(after.initial_credentials_shown!)!.slice(1)).toEqual(['get_operation', 'MCP']);
    const listed = await client.callTool({ name: 'list_operations', arguments: { limit: 200 } });
    expect(JSON.stringify(listed)).not.toContain('first-login-secret-3');
    await close();
  });
});

describe('create_erp_service over MCP, waiting for its operation', () => {
  it('answers with the initial credentials when its wait sees the create succeed, and no later answer has them', async () => {
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = '20';
    const { client, close } = await connectHttp(server.baseUrl, creator.value);
    const call = client.callTool({ name: 'create_erp_service', arguments: { server_id: team.serverIds[0], name: 'Waited' } });
    // No engine runs here: the operation waits queued until this test ends it as the engine would.
    const deadline = Date.now() + 10_000;
    let queued: { id: string; service_id: string | null } | undefined;
    while (!queued && Date.now() < deadline) {
      queued = await server.app.db.kysely.selectFrom('operations').select(['id', 'service_id'])
        .where('kind', '=', 'create').where('requested_by_token_id', '=', creator.id).where('requested_channel', '=', 'mcp').where('state', '=', 'queued')
        .executeTakeFirst();
      if (!queued) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(queued, 'the create was queued within 10 s').toBeDefined();
    await succeedWithCredentials(queued!.id, queued!.service_id!, 'first-login-secret-4');
    const answer = (await call).structuredContent as { id: string; state: string; result: unknown };
    expect(answer).toMatchObject({ id: queued!.id, state: 'succeeded', result: { initial_credentials: { login: 'admin', password: 'first-login-secret-4' } } });
    const again = await client.callTool({ name: 'get_operation', arguments: { operation_id: queued!.id } });
    await close();
    const shown = (again.structuredContent as { result: { initial_credentials_shown: string } }).result.initial_credentials_shown;
    expect(SHOWN.exec(shown)!.slice(1)).toEqual(['create_erp_service', 'MCP']);
  });
});

describe('a task of a create with initial credentials (MCP 2025-11-25)', () => {
  it('keeps them through tasks/get, which carries no result, and gives them in tasks/result', async () => {
    const { operationId } = await createdWithCredentials('As a task', 'first-login-secret-5');
    const taskId = taskIdOf(operationId, creator.id, taskHandleKeys(server.dataDir));
    const { client, close } = await connectHttp(server.baseUrl, creator.value);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await close();
    expect((result.structuredContent as { result: unknown }).result).toEqual({ initial_credentials: { login: 'admin', password: 'first-login-secret-5' } });
    expect(await storedResult(operationId)).not.toContain('tsec1:');
  });
});
