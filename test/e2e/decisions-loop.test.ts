// The whole decision loop through `teaminfra serve` as a real process, over real HTTP on loopback:
// an assistant asks over MCP (streamable HTTP, the SDK's client) and its call waits; a webhook
// receiver gets the signed decision.needed, verifies it with the package's exported
// verifyWebhook, and answers through REST with another token; the MCP call returns the answer,
// and decision.answered is delivered signed too. The same loop for an action the assistant's token
// needs approval for: its MCP call waits through the approval and returns the operation's end.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/index.js';
import { admin, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { act, killProcessesMatching, send } from '../engine/support/engine-http.js';
import { connectHttp } from '../mcp/clients.js';

interface DecisionEvent {
  type: string;
  data: {
    decision: { id: string; state: string; question: string; options: string[] | null; answer: string | null; answered_by: unknown };
    asked_by: { token_id: string; token_name: string | null; channel: string };
    action: unknown;
  };
}

describe('a decision asked over MCP and answered by a webhook receiver through REST', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let receiver: Receiver;
  let secret: string;
  let assistant: { id: string; token: string };
  let reviewer: { id: string; token: string };
  let ops: string;
  let serviceId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    const seeded = await seedThroughCli(dataDir, { team: 'Decisions loop', service: 'Shop ERP' });
    const { teamId: team, serverId: server } = seeded;
    ({ serviceId, token: ops } = seeded);
    assistant = await admin(dataDir, ['create-token', '--team', team, '--name', 'coding agent', '--accepted-by', 'mcp',
      '--permissions', 'decisions:request,services:operate', '--needs-approval', 'stop_erp_service']) as { id: string; token: string };
    reviewer = await admin(dataDir, ['create-token', '--team', team, '--name', 'release bot', '--accepted-by', 'api',
      '--permissions', 'decisions:answer']) as { id: string; token: string };
    secret = (await admin(dataDir, ['create-webhook', '--team', team, '--url', receiver.url,
      '--events', 'decision.needed,decision.answered', '--allow-private'])).secret;
    // vitest sets the wait to 0 for in-process servers; this one is its own process. A short
    // heartbeat keeps the suite quick (15 s by default).
    serve = await startServe(dataDir, [], { TEAMINFRA_MCP_WAIT_SECONDS: '60', TEAMINFRA_MCP_HEARTBEAT_SECONDS: '3' });
  }, 60_000);
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await receiver?.close();
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The next delivery of `type`, verified; deliveries of other types before it are skipped. */
  async function delivered(type: string, after: number): Promise<{ event: DecisionEvent; delivery: Received; index: number }> {
    for (let count = after + 1; ; count += 1) {
      const delivery = (await receiver.waitFor(count, 20_000))[count - 1]!;
      const event = verifyWebhook<DecisionEvent>(secret, delivery.headers, delivery.body);
      if (event.type === type) return { event, delivery, index: count };
    }
  }

  it('returns the answer to the waiting MCP call and delivers decision.needed and decision.answered, signed', async () => {
    const mcp = await connectHttp((serve as ServeProcess).baseUrl, assistant.token);
    const progress: string[] = [];
    const waiting = mcp.client.callTool(
      { name: 'request_decision', arguments: { question: 'Merge the schema change on Friday?', options: ['merge', 'wait'], context: 'CI is green.' } },
      undefined,
      { onprogress: (notification) => { progress.push(notification.message ?? ''); }, timeout: 60_000 },
    );
    let settled = false;
    void waiting.finally(() => { settled = true; });

    const needed = await delivered('decision.needed', receiver.received.length);
    expect(needed.event.data).toMatchObject({
      decision: { state: 'pending', question: 'Merge the schema change on Friday?', options: ['merge', 'wait'], answer: null },
      asked_by: { token_id: assistant.id, token_name: 'coding agent', channel: 'mcp' },
      action: null,
    });
    // A signature made with another secret does not verify.
    expect(() => verifyWebhook('whsec_' + Buffer.from('not the secret').toString('base64'), needed.delivery.headers, needed.delivery.body))
      .toThrow(/No matching signature/);
    // The assistant is still waiting: nobody has answered yet.
    expect(settled).toBe(false);

    const decisionId = needed.event.data.decision.id;
    const answered = await send((serve as ServeProcess).baseUrl, 'POST', `/api/decisions/${decisionId}/answer`, reviewer.token, { answer: 'wait' });
    expect(answered.status).toBe(200);

    const result = await waiting;
    await mcp.close();
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      id: decisionId, state: 'answered', answer: 'wait', answered_by: { type: 'token', id: reviewer.id, channel: 'api' },
    });
    expect(progress).toEqual([`Decision ${decisionId} is answered.`]);

    const done = await delivered('decision.answered', needed.index);
    expect(done.event.data.decision).toMatchObject({
      id: decisionId, state: 'answered', answer: 'wait', answered_by: { type: 'token', id: reviewer.id, channel: 'api' },
    });
    expect(done.delivery.headers['webhook-id']).not.toBe(needed.delivery.headers['webhook-id']);
  }, 60_000);

  it('tells the waiting MCP client at each heartbeat (TEAMINFRA_MCP_HEARTBEAT_SECONDS) that the question is still open', async () => {
    const mcp = await connectHttp((serve as ServeProcess).baseUrl, assistant.token);
    const progress: string[] = [];
    let heardPending: () => void = () => undefined;
    const pendingHeard = new Promise<void>((resolve) => { heardPending = resolve; });
    const waiting = mcp.client.callTool(
      { name: 'request_decision', arguments: { question: 'Which region for the new node?' } },
      undefined,
      {
        onprogress: (notification) => {
          progress.push(notification.message ?? '');
          if (notification.message?.endsWith(' is pending.')) heardPending();
        },
        timeout: 60_000,
      },
    );
    const needed = await delivered('decision.needed', receiver.received.length);
    const decisionId = needed.event.data.decision.id;
    const askedAt = Date.now();
    await pendingHeard;
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(2_000);

    expect((await send((serve as ServeProcess).baseUrl, 'POST', `/api/decisions/${decisionId}/answer`, reviewer.token,
      { answer: 'Frankfurt, next to the database.' })).status).toBe(200);
    const result = await waiting;
    await mcp.close();
    expect(result.structuredContent).toMatchObject({ id: decisionId, state: 'answered', answer: 'Frankfurt, next to the database.' });
    expect(progress).toEqual([`Decision ${decisionId} is pending.`, `Decision ${decisionId} is answered.`]);
    await delivered('decision.answered', needed.index);
  }, 60_000);

  it('makes an MCP stop by a token that needs approval wait for the approval, then returns the stopped service\'s operation', async () => {
    expect((await act((serve as ServeProcess).baseUrl, ops, 'POST', `/api/service-erp/${serviceId}/start`)).state).toBe('succeeded');
    const mcp = await connectHttp((serve as ServeProcess).baseUrl, assistant.token);
    const progress: string[] = [];
    const waiting = mcp.client.callTool(
      { name: 'stop_erp_service', arguments: { service_id: serviceId } },
      undefined,
      { onprogress: (notification) => { progress.push(notification.message ?? ''); }, timeout: 60_000 },
    );
    const needed = await delivered('decision.needed', receiver.received.length);
    expect(needed.event.data).toMatchObject({
      decision: { state: 'pending', options: ['approve', 'deny'], service_id: serviceId },
      asked_by: { token_id: assistant.id, token_name: 'coding agent', channel: 'mcp' },
      action: { capability: 'stop_erp_service', service_id: serviceId },
    });
    const operationId = (needed.event.data.action as { operation_id: string }).operation_id;
    expect((await send((serve as ServeProcess).baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body.state).toBe('running');
    // The client hears at once which decision it waits for, then at each heartbeat that it still waits.
    await until(() => progress.length >= 2, 10_000);
    const held = `Operation ${operationId} awaits approval in decision ${needed.event.data.decision.id}: a member of the team ` +
      '(in the panel) or another token with decisions:answer must approve it; this token cannot.';
    expect(progress.slice(0, 2)).toEqual([held, held]);

    expect((await send((serve as ServeProcess).baseUrl, 'POST', `/api/decisions/${needed.event.data.decision.id}/answer`, reviewer.token,
      { answer: 'approve' })).status).toBe(200);
    const result = await waiting;
    await mcp.close();
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      id: operationId, kind: 'stop', state: 'succeeded', decision_id: needed.event.data.decision.id,
    });
    expect(progress.at(-1)).toBe(`Operation ${operationId} is succeeded.`);
    expect(progress.filter((message) => message !== held && !message.endsWith('is succeeded.')).every((message) => message.startsWith(`Operation ${operationId} is `))).toBe(true);
    expect((await send((serve as ServeProcess).baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body.state).toBe('stopped');
    await delivered('decision.answered', needed.index);
  }, 60_000);
});
