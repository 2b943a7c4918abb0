// Decisions over real HTTP: a token asks, another answers, the rules of who may answer what, and
// approval before an action for a token that needs it (approved, denied, expired).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVABLE_ACTION_TITLES, APPROVABLE_ACTIONS } from '../../src/decisions/approvable.js';
import { listEvents } from '../../src/db/repositories/events.js';
import { catalog } from '../../tools/index.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { connectHttp } from '../mcp/clients.js';

let server: TestServer;
let team: SeededTeam;

beforeAll(async () => {
  server = await startTestServer({}, {}, { engine: true });
  team = await seedTeam(server.app);
});
afterAll(async () => { await server.close(); });

async function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(server.baseUrl + path, {
    method,
    headers: { Accept: 'application/json', Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() as Record<string, any> };
}

async function waitForOperation(id: string, token: string, ended = ['succeeded', 'failed']) {
  for (let tries = 0; tries < 200; tries += 1) {
    const { body } = await call('GET', `/api/operations/${id}`, token);
    if (ended.includes(body.state)) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`operation ${id} did not end`);
}

const eventsOf = async (type: string) =>
  (await listEvents(server.app.db.kysely, team.teamId, { limit: 1000 })).filter((event) => event.type === type)
    .map((event) => JSON.parse(event.payload).data);

describe('decisions', () => {
  it('lets a token ask and another answer with one of the options, never the asker, never twice', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const answerer = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'] });
    const asked = await call('POST', '/api/decisions', asker.value,
      { question: 'Ship release 42 today?', options: ['ship', 'wait'], context: 'Tests pass.\nOne flaky check.', service_id: team.serviceIds[0] });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ state: 'pending', options: ['ship', 'wait'], answer: null, service_id: team.serviceIds[0] });
    const id = asked.body.id as string;
    expect((await eventsOf('decision.needed')).some((data) => data.decision.id === id)).toBe(true);

    const own = await call('POST', `/api/decisions/${id}/answer`, (await makeToken(server.app, team.teamId)).value, { answer: 'ship' });
    expect(own.status).toBe(200);
    const twice = await call('POST', `/api/decisions/${id}/answer`, answerer.value, { answer: 'wait' });
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatch(/already answered \("ship"\)/);

    const second = (await call('POST', '/api/decisions', asker.value, { question: 'Which day?', options: ['monday', 'friday'] })).body;
    expect((await call('POST', `/api/decisions/${second.id}/answer`, asker.value, { answer: 'monday' })).status).toBe(403);
    const askerAnswers = await call('POST', `/api/decisions/${second.id}/answer`,
      (await makeToken(server.app, team.teamId, { permissions: ['decisions:answer', 'decisions:request'] })).value, { answer: 'sunday' });
    expect(askerAnswers.status).toBe(400);
    expect(askerAnswers.body.detail).toBe('The answer must be one of the options: "monday", "friday".');
    const answered = await call('POST', `/api/decisions/${second.id}/answer`, answerer.value, { answer: 'friday' });
    expect(answered.body).toMatchObject({ state: 'answered', answer: 'friday', answered_by: { type: 'token', id: answerer.id, channel: 'api' } });
    expect((await eventsOf('decision.answered')).map((data) => data.decision.id)).toContain(second.id);
  });

  it('refuses the asker answering its own decision with a sentence', async () => {
    const both = await makeToken(server.app, team.teamId, { permissions: ['decisions:request', 'decisions:answer'] });
    const asked = (await call('POST', '/api/decisions', both.value, { question: 'Free text, please' })).body;
    const refused = await call('POST', `/api/decisions/${asked.id}/answer`, both.value, { answer: 'myself' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('own_decision');
  });

  it('hides a decision about a service from a token restricted to another service', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const asked = (await call('POST', '/api/decisions', asker.value, { question: 'Restart A?', service_id: team.serviceIds[0] })).body;
    const elsewhere = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'], services: [team.serviceIds[1]] });
    expect((await call('GET', `/api/decisions/${asked.id}`, elsewhere.value)).status).toBe(404);
    expect((await call('POST', `/api/decisions/${asked.id}/answer`, elsewhere.value, { answer: 'yes' })).status).toBe(404);
    const listed = await call('GET', '/api/decisions?state=pending', elsewhere.value);
    expect(listed.body.data.map((decision: { id: string }) => decision.id)).not.toContain(asked.id);
  });

  it('refuses an answer after expiry, and lets only the asker cancel', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const answerer = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer', 'decisions:request'] });
    const asked = (await call('POST', '/api/decisions', asker.value, { question: 'Soon gone?', expires_in_minutes: 1 })).body;
    expect((await call('POST', `/api/decisions/${asked.id}/cancel`, answerer.value)).status).toBe(403);
    await server.app.db.kysely.updateTable('decisions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', asked.id).execute();
    const late = await call('POST', `/api/decisions/${asked.id}/answer`, answerer.value, { answer: 'yes' });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/expired/);
    await server.app.decisions.sweepOnce();
    expect((await call('GET', `/api/decisions/${asked.id}`, asker.value)).body.state).toBe('expired');
    expect((await eventsOf('decision.expired')).map((data) => data.decision.id)).toContain(asked.id);

    const other = (await call('POST', '/api/decisions', asker.value, { question: 'Never mind?' })).body;
    expect((await call('POST', `/api/decisions/${other.id}/cancel`, asker.value)).body.state).toBe('cancelled');
  });

  it('returns the first decision, and announces no second one, when POST /api/decisions is retried with the same Idempotency-Key', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const question = { question: 'Retry-safe?', options: ['yes', 'no'] };
    const first = await call('POST', '/api/decisions', asker.value, question, { 'Idempotency-Key': 'ask-42' });
    const retry = await call('POST', '/api/decisions', asker.value, { options: ['yes', 'no'], question: 'Retry-safe?' }, { 'Idempotency-Key': 'ask-42' });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect((await eventsOf('decision.needed')).filter((data) => data.decision.id === first.body.id)).toHaveLength(1);
    const asked = await server.app.db.kysely.selectFrom('decisions').select('id').where('question', '=', 'Retry-safe?').execute();
    expect(asked).toHaveLength(1);

    const reused = await call('POST', '/api/decisions', asker.value, { question: 'Something else?' }, { 'Idempotency-Key': 'ask-42' });
    expect(reused.status).toBe(409);
    expect(reused.body.detail).toMatch(/already used for a different request/);
    const otherToken = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    expect((await call('POST', '/api/decisions', otherToken.value, question, { 'Idempotency-Key': 'ask-42' })).body.id).not.toBe(first.body.id);
  });

  it('reads a decision past its expiry as expired everywhere before the sweeper closes it (REST, lists, MCP)', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request', 'decisions:read'] });
    const asked = (await call('POST', '/api/decisions', asker.value, { question: 'Overdue?' })).body;
    await server.app.db.kysely.updateTable('decisions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', asked.id).execute();
    expect((await server.app.db.kysely.selectFrom('decisions').select('state').where('id', '=', asked.id).executeTakeFirst())?.state).toBe('pending');

    expect((await call('GET', `/api/decisions/${asked.id}`, asker.value)).body.state).toBe('expired');
    const ids = async (state: string) => (await call('GET', `/api/decisions?state=${state}&limit=200`, asker.value)).body.data.map((entry: { id: string }) => entry.id);
    expect(await ids('pending')).not.toContain(asked.id);
    expect(await ids('expired')).toContain(asked.id);
    const { client, close } = await connectHttp(server.baseUrl, asker.value);
    const read = await client.callTool({ name: 'get_decision', arguments: { decision_id: asked.id } });
    await close();
    expect((read.structuredContent as { state: string }).state).toBe('expired');
  });

  it('makes an MCP request_decision wait for the answer given through REST', async () => {
    const asker = await makeToken(server.app, team.teamId, { permissions: ['decisions:request'] });
    const answerer = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'] });
    const original = process.env.TEAMINFRA_MCP_WAIT_SECONDS;
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = '30';
    const mcp = await connectHttp(server.baseUrl, asker.value);
    const waiting = mcp.client.callTool({ name: 'request_decision', arguments: { question: 'Drop the staging copy?', options: ['yes', 'no'] } });
    let pending: Record<string, any> | undefined;
    for (let tries = 0; tries < 100 && !pending; tries += 1) {
      pending = (await call('GET', '/api/decisions?state=pending', answerer.value)).body.data
        .find((decision: { question: string }) => decision.question === 'Drop the staging copy?');
      if (!pending) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await call('POST', `/api/decisions/${pending!.id}/answer`, answerer.value, { answer: 'no' })).status).toBe(200);
    const result = await waiting;
    await mcp.close();
    process.env.TEAMINFRA_MCP_WAIT_SECONDS = original;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: pending!.id, state: 'answered', answer: 'no' });
  });
});

describe('approval before an action', () => {
  it('names in the catalog exactly the actions the command line and panel offer', () => {
    expect(catalog.filter((capability) => capability.approvable).map((capability) => capability.name).sort())
      .toEqual([...APPROVABLE_ACTIONS].sort());
  });

  it('labels each approvable action on the panel with its title in the catalog', () => {
    expect(Object.fromEntries(catalog.filter((capability) => capability.approvable).map((capability) => [capability.name, capability.title])))
      .toEqual(APPROVABLE_ACTION_TITLES);
  });

  it('holds the action of a token that needs approval, runs it once another token approves', async () => {
    const agent = await makeToken(server.app, team.teamId, { permissions: ['services:operate', 'decisions:answer'], needsApproval: ['stop_erp_service'] });
    const approver = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'] });
    const held = await call('POST', `/api/service-erp/${team.serviceIds[0]}/stop`, agent.value);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ state: 'awaiting_approval', kind: 'stop', service_id: team.serviceIds[0] });
    const decisionId = held.body.decision_id as string;
    const needed = (await eventsOf('decision.needed')).find((data) => data.decision.id === decisionId);
    expect(needed.action).toMatchObject({ capability: 'stop_erp_service', operation_id: held.body.id, service_id: team.serviceIds[0] });
    expect(needed.asked_by).toMatchObject({ token_id: agent.id, token_name: 'test token' });

    // Nothing runs while it waits, and the token that asked can never approve it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call('GET', `/api/operations/${held.body.id}`, agent.value)).body.state).toBe('awaiting_approval');
    expect((await call('POST', `/api/decisions/${decisionId}/answer`, agent.value, { answer: 'approve' })).body.code).toBe('own_decision');

    expect((await call('POST', `/api/decisions/${decisionId}/answer`, approver.value, { answer: 'approve' })).status).toBe(200);
    expect(await waitForOperation(held.body.id, agent.value)).toMatchObject({ state: 'succeeded', decision_id: decisionId });
  });

  it('fails the action with the reason when denied, and when its decision expires', async () => {
    const agent = await makeToken(server.app, team.teamId, { permissions: ['services:operate'], needsApproval: ['stop_erp_service'] });
    const approver = await makeToken(server.app, team.teamId, { permissions: ['decisions:answer'] });
    const denied = (await call('POST', `/api/service-erp/${team.serviceIds[1]}/stop`, agent.value)).body;
    await call('POST', `/api/decisions/${denied.decision_id}/answer`, approver.value, { answer: 'deny' });
    expect(await waitForOperation(denied.id, agent.value)).toMatchObject({
      state: 'failed', reason: `Not approved: denied in decision ${denied.decision_id}.`,
    });

    const expiring = (await call('POST', `/api/service-erp/${team.serviceIds[1]}/stop`, agent.value)).body;
    await server.app.db.kysely.updateTable('decisions').set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', expiring.decision_id).execute();
    await server.app.decisions.sweepOnce();
    expect(await waitForOperation(expiring.id, agent.value)).toMatchObject({ state: 'failed' });
    expect((await waitForOperation(expiring.id, agent.value)).reason).toMatch(/^Not approved: decision dec_\w+ expired at /);
  });

  it('checks the asking token again when approved, as invoke() would: a permission taken away, a plan without the API', async () => {
    const other = await seedTeam(server.app, { name: 'Downgraded team' });
    const cases = [
      { teamId: team.teamId, serviceId: team.serviceIds[0]!, change: (tokenId: string) => server.app.db.kysely.updateTable('api_tokens')
        .set({ permissions: 'services:read' }).where('id', '=', tokenId).execute(), reason: /This API token does not have the services:operate scope\./ },
      { teamId: other.teamId, serviceId: other.serviceIds[0]!, change: () => server.app.db.kysely.updateTable('teams')
        .set({ plan: 'free' }).where('id', '=', other.teamId).execute(), reason: /does not include the API/ },
    ];
    for (const { teamId, serviceId, change, reason } of cases) {
      const agent = await makeToken(server.app, teamId, { permissions: ['services:operate'], needsApproval: ['stop_erp_service'] });
      const held = (await call('POST', `/api/service-erp/${serviceId}/stop`, agent.value)).body;
      expect(held.state).toBe('awaiting_approval');
      await change(agent.id);
      // Approved (as a member would in the panel) after the change.
      await server.app.db.kysely.updateTable('decisions').set({
        state: 'answered', answer: 'approve', answered_by_type: 'member', answered_by_id: 'usr_panel', answered_channel: 'panel',
        answered_at: new Date().toISOString(),
      }).where('id', '=', held.decision_id).execute();
      await server.app.decisions.sweepOnce();
      const operation = await server.app.db.kysely.selectFrom('operations').select(['state', 'reason']).where('id', '=', held.id).executeTakeFirstOrThrow();
      expect(operation.state).toBe('failed');
      expect(operation.reason).toMatch(/^Approved, but it could not be carried out: /);
      expect(operation.reason).toMatch(reason);
    }
  });

  it('carries out an approval that a crash left unsettled when the sweeper runs', async () => {
    const agent = await makeToken(server.app, team.teamId, { permissions: ['services:operate'], needsApproval: ['stop_erp_service'] });
    const held = (await call('POST', `/api/service-erp/${team.copyId}/stop`, agent.value)).body;
    // As if the process died right after writing the answer, before queueing the operation.
    await server.app.db.kysely.updateTable('decisions').set({
      state: 'answered', answer: 'approve', answered_by_type: 'member', answered_by_id: 'usr_crashed', answered_channel: 'panel',
      answered_at: new Date().toISOString(),
    }).where('id', '=', held.decision_id).execute();
    expect((await call('GET', `/api/operations/${held.id}`, agent.value)).body.state).toBe('awaiting_approval');
    await server.app.decisions.sweepOnce();
    expect((await waitForOperation(held.id, agent.value)).state).toBe('succeeded');
  });
});
