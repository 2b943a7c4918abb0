// The activity trail (issue 24), black-box against the real server and its real database: after a
// scripted sequence (an owner signs in and creates a token in the panel, a start over REST, a
// refused stop over MCP),
// list_activity answers exactly those entries, newest first, with their channel, outcome and
// code; each filter narrows them; a token limited to services sees only entries about those;
// another team's entries never appear; reading the trail is not itself an entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, problemIn } from '../mcp/clients.js';
import { getJson, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'activity-test-password';

interface Entry {
  id: string; at: string; token: { id: string; name: string | null; source: string | null } | null;
  member: { id: string; email: string | null } | null; channel: string; action: string;
  target: { type: string; id: string } | null; outcome: string; code: string | null;
}
interface Page { data: Entry[]; next_cursor: string | null }

let server: TestServer;
let team: SeededTeam;
let reader: string;
let robot: { id: string; value: string };
let assistantId: string;
let entries: Entry[];

async function activity(query = '', token = reader): Promise<Page> {
  const answer = await getJson(server.baseUrl, `/api/activity${query}`, token);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as Page;
}
const actions = (page: Page) => page.data.map((entry) => `${entry.channel} ${entry.action} ${entry.outcome}`);

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app, { name: 'Acme' });
  reader = (await makeToken(server.app, team.teamId, { name: 'auditor', permissions: ['activity:read'] })).value;
  robot = await makeToken(server.app, team.teamId, { name: 'deploy robot' });

  // Another team acts too: none of this may ever show.
  const other = await seedTeam(server.app, { name: 'Other' });
  const stranger = (await makeToken(server.app, other.teamId, { name: 'stranger' })).value;
  await fetch(`${server.baseUrl}/api/service-erp/${other.serviceIds[0]}/start`, { method: 'POST', headers: { Authorization: `Bearer ${stranger}` } });
  await fetch(`${server.baseUrl}/api/service-erp/${team.serviceIds[0]}/stop`, { method: 'POST', headers: { Authorization: `Bearer ${stranger}` } });

  // 1. In the panel, the owner creates a token that may read services but not operate them.
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
  const owner = new Visitor(server.baseUrl);
  expect((await owner.signIn('owner@example.com', PASSWORD)).status).toBe(303);
  const form = await owner.request('GET', '/panel/developer/api-tokens/new');
  const created = await owner.request('POST', '/panel/developer/api-tokens', [['_csrf', owner.csrfFrom(form.text)], ['name', 'assistant'],
    ['accepted_by', 'both'], ['access', 'selected'], ['permissions', 'services:read']]);
  expect(created.status).toBe(201);
  const assistantValue = /id="token-value" class="secret" readonly value="([^"]+)"/.exec(created.text)![1]!;
  assistantId = (await server.app.db.kysely.selectFrom('api_tokens').select('id').where('name', '=', 'assistant').executeTakeFirstOrThrow()).id;

  // 2. Over REST, the robot starts the first service.
  const started = await fetch(`${server.baseUrl}/api/service-erp/${team.serviceIds[0]}/start`, {
    method: 'POST', headers: { Authorization: `Bearer ${robot.value}`, Accept: 'application/json' },
  });
  expect(started.status).toBe(202);

  // 3. Over MCP, the assistant tries to stop it, and is refused.
  const mcp = await connectHttp(server.baseUrl, assistantValue);
  try {
    const refused = await mcp.client.callTool({ name: 'stop_erp_service', arguments: { service_id: team.serviceIds[0] } });
    expect(refused.isError).toBe(true);
    expect(problemIn(refused)?.code).toBe('missing_permission');
  } finally {
    await mcp.close();
  }
  await server.app.audit.flush();
  entries = (await activity()).data;
});
afterAll(async () => { await server.close(); });

describe('GET /api/activity after a token created in the panel, a start over REST and a refused stop over MCP', () => {
  it('answers exactly those entries, newest first, with their channel, outcome and code', () => {
    const owner = entries[2]!.member;
    expect(entries).toEqual([
      expect.objectContaining({
        token: { id: assistantId, name: 'assistant', source: 'panel' }, member: null, channel: 'mcp', action: 'stop_erp_service',
        target: { type: 'service', id: team.serviceIds[0] }, outcome: 'denied', code: 'missing_permission',
      }),
      expect.objectContaining({
        token: { id: robot.id, name: 'deploy robot', source: 'panel' }, member: null, channel: 'rest', action: 'start_erp_service',
        target: { type: 'service', id: team.serviceIds[0] }, outcome: 'allowed', code: null,
      }),
      expect.objectContaining({
        token: null, channel: 'panel', action: 'create_token', target: { type: 'token', id: assistantId }, outcome: 'allowed', code: null,
      }),
      expect.objectContaining({ token: null, member: owner, channel: 'panel', action: 'sign_in', target: null, outcome: 'allowed', code: null }),
    ]);
    expect(owner).toEqual({ id: expect.stringMatching(/^usr_/), email: 'owner@example.com' });
    expect(entries.map((entry) => entry.at)).toEqual([...entries.map((entry) => entry.at)].sort().reverse());
  });

  it('is not itself an entry: reading the trail only marks the token as used', async () => {
    await activity();
    await server.app.audit.flush();
    expect((await activity()).data.map((entry) => entry.id)).toEqual(entries.map((entry) => entry.id));
    const auditor = await server.app.db.kysely.selectFrom('api_tokens').select('last_used_at').where('name', '=', 'auditor').executeTakeFirstOrThrow();
    expect(auditor.last_used_at).not.toBeNull();
  });

  it('narrows to a token, a service, an action, an outcome and a time range', async () => {
    expect(actions(await activity(`?token_id=${assistantId}`))).toEqual(['mcp stop_erp_service denied']);
    expect(actions(await activity(`?service_id=${team.serviceIds[0]}`))).toEqual(['mcp stop_erp_service denied', 'rest start_erp_service allowed']);
    expect(actions(await activity(`?service_id=${team.serviceIds[1]}`))).toEqual([]);
    expect(actions(await activity('?action=create_token'))).toEqual(['panel create_token allowed']);
    expect(actions(await activity('?outcome=allowed'))).toEqual(['rest start_erp_service allowed', 'panel create_token allowed', 'panel sign_in allowed']);
    expect(actions(await activity(`?token_id=${robot.id}&outcome=denied`))).toEqual([]);
    expect(actions(await activity(`?service_id=${team.serviceIds[0]}&token_id=${robot.id}&action=start_erp_service&outcome=allowed`)))
      .toEqual(['rest start_erp_service allowed']);
    const startedAt = entries[1]!.at;
    expect(actions(await activity(`?since=${startedAt}`))).toEqual(['mcp stop_erp_service denied', 'rest start_erp_service allowed']);
    expect(actions(await activity(`?until=${startedAt}`))).toEqual(['panel create_token allowed', 'panel sign_in allowed']);
    expect(actions(await activity(`?since=${startedAt}&until=${entries[0]!.at}`))).toEqual(['rest start_erp_service allowed']);
    expect(actions(await activity('?since=2000-01-01&until=2000-01-02'))).toEqual([]);
  });

  it('pages newest first with next_cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await activity(`?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(1);
      seen.push(...page.data.map((entry) => entry.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(entries.map((entry) => entry.id));
  });

  it('shows a token limited to services only the entries about those, and 404 for a service it does not reach', async () => {
    const limitedToFirst = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'], services: [team.serviceIds[0]] })).value;
    expect(actions(await activity('', limitedToFirst))).toEqual(['mcp stop_erp_service denied', 'rest start_erp_service allowed']);
    const limitedToSecond = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'], services: [team.serviceIds[1]] })).value;
    expect(actions(await activity('', limitedToSecond))).toEqual([]);
    const refused = await getJson(server.baseUrl, `/api/activity?service_id=${team.serviceIds[0]}`, limitedToSecond);
    expect(refused.status).toBe(404);
  });

  it('never answers another team\'s entries, even filtered by that team\'s token or service', async () => {
    const stranger = await server.app.db.kysely.selectFrom('api_tokens').select('id').where('name', '=', 'stranger').executeTakeFirstOrThrow();
    expect((await activity(`?token_id=${stranger.id}`)).data).toEqual([]);
    const otherService = await server.app.db.kysely.selectFrom('erp_services as s').innerJoin('teams as t', 't.id', 's.team_id')
      .select('s.id').where('t.name', '=', 'Other').executeTakeFirstOrThrow();
    expect((await getJson(server.baseUrl, `/api/activity?service_id=${otherService.id}`, reader)).status).toBe(404);
  });

  it('refuses a token without activity:read with the spec\'s 403 sentence, even one with every other permission', async () => {
    const everythingElse = (await makeToken(server.app, team.teamId, { permissions: ['services:write', 'services:operate', 'decisions:answer'] })).value;
    const refused = await getJson(server.baseUrl, '/api/activity', everythingElse);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_permission', detail: 'This API token does not have the activity:read scope.' });
  });

  it('answers the same entries through the MCP tool list_activity', async () => {
    const mcp = await connectHttp(server.baseUrl, reader);
    try {
      const listed = await mcp.client.callTool({ name: 'list_activity', arguments: { token_id: assistantId, outcome: 'denied' } });
      expect(listed.isError).toBeFalsy();
      expect((listed.structuredContent as unknown as Page).data.map((entry) => entry.id)).toEqual([entries[0]!.id]);
    } finally {
      await mcp.close();
    }
  });

  // Last: it adds an entry of its own.
  it('shows a token limited to servers only the entries about those: a service created on its server', async () => {
    const created = await fetch(`${server.baseUrl}/api/service-erp`, {
      method: 'POST', headers: { Authorization: `Bearer ${robot.value}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ server_id: team.serverIds[0], name: 'ERP C' }),
    });
    expect(created.status).toBe(202);
    await server.app.audit.flush();
    const onFirst = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'], servers: [team.serverIds[0]] })).value;
    expect((await activity('', onFirst)).data).toEqual([expect.objectContaining({
      token: { id: robot.id, name: 'deploy robot', source: 'panel' }, action: 'create_erp_service', target: { type: 'server', id: team.serverIds[0] },
    })]);
    const onSecond = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'], servers: [team.serverIds[1]] })).value;
    expect((await activity('', onSecond)).data).toEqual([]);
  });

  it('explains a malformed filter field by field', async () => {
    const refused = await getJson(server.baseUrl, '/api/activity?since=yesterday&outcome=maybe', reader);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('The request has invalid fields: outcome, since.');
  });

  it('refuses a time that is not on the calendar or has text after it, naming the field, over REST and MCP', async () => {
    for (const [query, field] of [['since=2026-02-30', 'since'], ['until=2026-11-28junk', 'until'], ['since=2026-04-31T10:00:00Z', 'since']]) {
      const refused = await getJson(server.baseUrl, `/api/activity?${query}`, reader);
      expect(refused.status, query).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.body.errors, query).toEqual([{ field, message: expect.stringMatching(/^Must be a date/) }]);
    }
    const mcp = await connectHttp(server.baseUrl, reader);
    try {
      const refused = await mcp.client.callTool({ name: 'list_activity', arguments: { since: '2026-02-30' } });
      expect(refused.isError).toBe(true);
      expect(problemIn(refused)?.errors).toEqual([{ field: 'since', message: 'Must be a date and time that exist (such as 2026-02-28, not 2026-02-30).' }]);
    } finally {
      await mcp.close();
    }
  });
});
