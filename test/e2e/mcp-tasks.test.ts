// Long actions as tasks, black-box, for clients that can follow one: on MCP 2025-11-25 the SDK's v1
// Client asking for a task-augmented call (its experimental tasks), on 2026-07-28 a client that
// declares the tasks extension. The task is our operation (or pending decision): created at
// once, polled with tasks/get through the same gate as get_operation, its result the call's
// result; a handle is refused to any other token as not found; a revocation applies to the next poll.
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectHttp, connectStdio } from '../mcp/clients.js';
import {
  connectModernHttp, connectModernStdio, modernHttpRequest, modernStdioRequest, modernToolCall, type ModernConnected,
} from '../mcp/clients-v2.js';

let server: TestServer;
let team: SeededTeam;

beforeAll(async () => {
  server = await startTestServer({ engine: { pollMs: 50, reconcileIntervalMs: 200 } }, {}, { engine: true });
  team = await seedTeam(server.app);
});
afterAll(async () => { await server.close(); });

const operator = () => makeToken(server.app, team.teamId, { permissions: ['services:operate'] });
const NOT_FOUND = { code: -32602, message: expect.stringMatching(/not_found: No task with this id was started by this token\.$/) };

describe.each([
  { label: 'streamable HTTP', connect: (token: string) => connectHttp(server.baseUrl, token) },
  { label: 'stdio', connect: (token: string) => connectStdio(server.dataDir, token, server.databaseUrl) },
])('tasks for the v1 client (2025-11-25) over $label', ({ connect }) => {
  it('shows the long tools as able to run as tasks, and declares tasks for tools/call', async () => {
    const { client, close } = await connect((await operator()).value);
    const tools = (await client.listTools()).tools;
    await close();
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } } });
    expect(tools.find((tool) => tool.name === 'stop_erp_service')?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((tool) => tool.name === 'list_erp_services')?.execution).toBeUndefined();
  });

  it('creates a task for the operation, polls it to the end and returns the result', async () => {
    const owner = await operator();
    const { client, close } = await connect(owner.value);
    const seen: { type: string; status?: string; taskId?: string }[] = [];
    let result: z.infer<typeof CallToolResultSchema> | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'stop_erp_service', arguments: { service_id: team.serviceIds[0] } }, CallToolResultSchema, { task: {} },
    )) {
      if (message.type === 'taskCreated' || message.type === 'taskStatus') seen.push({ type: message.type, status: message.task.status, taskId: message.task.taskId });
      if (message.type === 'result') result = message.result as typeof result;
      if (message.type === 'error') throw message.error;
    }
    const taskId = seen[0]!.taskId!;
    expect(seen[0]).toMatchObject({ type: 'taskCreated', status: 'working' });
    expect(taskId).toMatch(/^op_\w+\.[\w-]+$/);
    expect(seen.at(-1)).toMatchObject({ type: 'taskStatus', status: 'completed' });
    expect(result?.structuredContent).toMatchObject({ id: taskId.split('.')[0], kind: 'stop', state: 'succeeded' });
    // The same handle, polled again later, still answers (it is the operation, which is kept).
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed', ttl: null });

    const other = await connect((await makeToken(server.app, team.teamId)).value);
    await expect(other.client.experimental.tasks.getTask(taskId)).rejects.toMatchObject(NOT_FOUND);
    await expect(other.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject(NOT_FOUND);
    await other.close();

    // Revoked while the conversation is open: its next poll is refused.
    await revokeToken(server.app.db.kysely, owner.id);
    await expect(client.experimental.tasks.getTask(taskId)).rejects.toThrow(/revoked|401/i);
    await close().catch(() => undefined);
  });

  it('keeps waiting with progress for a call that asks for no task', async () => {
    const { client, close } = await connect((await operator()).value);
    const plain = await client.callTool({ name: 'start_erp_service', arguments: { service_id: team.serviceIds[0] } });
    await close();
    expect(plain.structuredContent).toMatchObject({ kind: 'start', state: expect.stringMatching(/queued|running|succeeded/) });
    expect((plain as { task?: unknown }).task).toBeUndefined();
  });
});

const ModernTask = z.looseObject({
  taskId: z.string(), status: z.string(), statusMessage: z.string().optional(), createdAt: z.string(), lastUpdatedAt: z.string(),
  ttlMs: z.number().nullable(), pollIntervalMs: z.number().optional(), result: z.looseObject({ structuredContent: z.any() }).optional(),
});

async function pollModern(client: ModernConnected['client'], taskId: string): Promise<z.infer<typeof ModernTask>> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const task = await client.request({ method: 'tasks/get', params: { taskId } }, ModernTask);
    if (task.status !== 'working') return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} did not end`);
}

describe.each([
  {
    label: 'streamable HTTP',
    start: (token: string, message: ReturnType<typeof modernToolCall>) => modernHttpRequest(server.baseUrl, token, message),
    connect: (token: string) => connectModernHttp(server.baseUrl, token, { tasks: true }),
  },
  {
    label: 'stdio',
    start: (token: string, message: ReturnType<typeof modernToolCall>) => modernStdioRequest(server.dataDir, token, message, server.databaseUrl),
    connect: (token: string) => connectModernStdio(server.dataDir, token, { tasks: true, databaseUrl: server.databaseUrl }),
  },
])('tasks for a 2026-07-28 client with the tasks extension over $label', ({ start, connect }) => {
  it('offers the tasks extension in server/discover', async () => {
    const { client, close } = await connect((await operator()).value);
    expect(client.getServerCapabilities()?.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
    await close();
  });

  it('answers a long action with a task, readable with tasks/get to its result, and only by its token', async () => {
    const owner = await operator();
    const created = await start(owner.value, modernToolCall(1, 'redeploy_erp_service', { service_id: team.serviceIds[1] }));
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: 1000 });
    const taskId = created.result.taskId as string;
    expect(taskId).toMatch(/^op_\w+\.[\w-]+$/);

    // Another connection (another process, over stdio) follows the same handle: it is durable.
    const { client, close } = await connect(owner.value);
    const ended = await pollModern(client, taskId);
    expect(ended).toMatchObject({ taskId, status: 'completed' });
    expect(ended.result?.structuredContent).toMatchObject({ id: taskId.split('.')[0], kind: 'redeploy', state: 'succeeded' });
    await expect(client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({}))).resolves.toBeDefined();

    const other = await connect((await makeToken(server.app, team.teamId)).value);
    await expect(other.client.request({ method: 'tasks/get', params: { taskId } }, ModernTask)).rejects.toMatchObject(NOT_FOUND);
    // A bare operation id is no handle either, even to a token that may read the operation.
    await expect(other.client.request({ method: 'tasks/get', params: { taskId: taskId.split('.')[0]! } }, ModernTask)).rejects.toMatchObject(NOT_FOUND);
    await other.close();

    await revokeToken(server.app.db.kysely, owner.id);
    await expect(client.request({ method: 'tasks/get', params: { taskId } }, ModernTask)).rejects.toThrow(/revoked|401/i);
    await close().catch(() => undefined);
  });

  it('makes a pending decision a task that completes when someone answers it', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const created = await start(asker.value, modernToolCall(2, 'request_decision', { question: 'Restore last night?', options: ['yes', 'no'] }));
    const taskId = created.result.taskId as string;
    expect(taskId).toMatch(/^dec_\w+\.[\w-]+$/);
    const answerer = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'] });
    const answered = await fetch(`${server.baseUrl}/api/decisions/${taskId.split('.')[0]}/answer`, {
      method: 'POST', headers: { authorization: `Bearer ${answerer.value}`, 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'yes' }),
    });
    expect(answered.status).toBe(200);
    const { client, close } = await connect(asker.value);
    const ended = await pollModern(client, taskId);
    await close();
    expect(ended.result?.structuredContent).toMatchObject({ state: 'answered', answer: 'yes' });
  });

  it('keeps waiting for a client that does not declare the extension', async () => {
    const created = await start((await operator()).value, modernToolCall(3, 'start_erp_service', { service_id: team.serviceIds[1] }, false));
    expect(created.result.resultType).not.toBe('task');
    expect(created.result.structuredContent).toMatchObject({ kind: 'start' });
  });
});
