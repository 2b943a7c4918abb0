// Names and descriptions people give are refused, with the field named, when they hold control
// characters (NUL, line breaks, escapes) or text-direction controls such as U+202E RLO: over
// REST, MCP and the panel's forms (the command line is in test/cli/admin.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, problemIn } from '../mcp/clients.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const RLO = '\u202E';
const SENTENCE = 'control characters or characters that change the direction of text';

let server: TestServer;
let team: SeededTeam;
let bearer: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  bearer = (await makeToken(server.app, team.teamId)).value;
  await seedMembers(server.app, team.teamId, 'right-password', ['owner']);
});
afterAll(async () => { await server.close(); });

async function post(path: string, body: object) {
  const response = await fetch(server.baseUrl + path, {
    method: 'POST', headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() as { code: string; errors?: { field: string; message: string }[] } };
}

describe('decision options over REST', () => {
  it('refuses an option with NUL, an escape sequence or a right-to-left override, as it refuses them in the question', async () => {
    for (const option of ['ship\u0000', 'wait\u001b[31m', `ship${RLO}txt.exe`, 'two\nlines']) {
      const { status, body: problem } = await post('/api/decisions', { question: 'Ship it?', options: ['keep', option] });
      expect(status, JSON.stringify(option)).toBe(400);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors).toEqual([{ field: 'options.1', message: expect.stringContaining(SENTENCE) }]);
    }
    expect(await server.app.db.kysely.selectFrom('decisions').select('id').where('question', '=', 'Ship it?').execute()).toEqual([]);
  });
});

describe('names over REST', () => {
  it('refuses a server, service or copy name with a control or direction character, naming the field', async () => {
    const attempts = [
      ['/api/servers', { name: `eu-1${RLO}gpj.exe` }],
      ['/api/servers', { name: 'eu\u00001' }],
      ['/api/service-erp', { server_id: team.serverIds[0], name: `Shop\u001b[2J` }],
      [`/api/service-erp/${team.serviceIds[0]}/copies`, { name: `staging\u2066` }],
    ] as const;
    for (const [path, body] of attempts) {
      const { status, body: problem } = await post(path, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors).toEqual([{ field: 'name', message: expect.stringContaining(SENTENCE) }]);
    }
    const servers = await server.app.db.kysely.selectFrom('servers').select('name').where('team_id', '=', team.teamId).execute();
    expect(servers.map((row) => row.name)).toEqual(['server-a', 'server-b']);
  });
});

describe('names over MCP', () => {
  it('answers an isError validation_failed naming the field when a tool gets such a name', async () => {
    const { client, close } = await connectHttp(server.baseUrl, bearer);
    const result = await client.callTool({ name: 'create_server', arguments: { name: `eu-1${RLO}` } });
    await close();
    expect(result.isError).toBe(true);
    expect(problemIn(result)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'name', message: expect.stringContaining('U+202E') }] });
  });
});

describe('names in the panel', () => {
  async function signedIn() {
    const visitor = new Visitor(server.baseUrl);
    expect((await visitor.signIn('owner@example.com', 'right-password')).status).toBe(303);
    return visitor;
  }

  it('refuses a token name with a direction character, saying which field', async () => {
    const visitor = await signedIn();
    const form = await visitor.request('GET', '/panel/developer/api-tokens/new');
    const answer = await visitor.request('POST', '/panel/developer/api-tokens', {
      _csrf: visitor.csrfFrom(form.text), name: `deploy${RLO}`, accepted_by: 'api', access: 'full',
    });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain(`The name must not contain ${SENTENCE} (found U+202E).`);
  });

  it('refuses a webhook description with a control character, saying which field', async () => {
    const visitor = await signedIn();
    const form = await visitor.request('GET', '/panel/developer/webhooks/new');
    const answer = await visitor.request('POST', '/panel/developer/webhooks', {
      _csrf: visitor.csrfFrom(form.text), url: 'https://hooks.example.com/x', description: 'ops\u0000', events: 'all',
    });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain(`The description must not contain ${SENTENCE} (found U+0000).`);
  });

  it('refuses an invitation email with a direction character, saying which field', async () => {
    const visitor = await signedIn();
    const page = await visitor.request('GET', '/panel/members');
    const answer = await visitor.request('POST', '/panel/members/invitations', {
      _csrf: visitor.csrfFrom(page.text), email: `ada${RLO}@example.com`, role: 'member',
    });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain(`The email must not contain ${SENTENCE} (found U+202E).`);
  });
});
