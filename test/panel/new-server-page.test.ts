// New server in the panel over plain HTTP, against the real server with a newcomer's settings (no
// engine: the create stays queued, which is all these tests read): offered on the Overview to the
// roles with servers:write only; its form refuses a post without its CSRF token and one from
// another site; a member's forced post is refused by invoke() (403) and recorded with the member as
// its actor; the API's sentences are shown beside the field; an owner's create is the member's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByEmail } from '../../src/db/repositories/teams.js';
import { getJson, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'new-server-password';
let server: TestServer;
let team: SeededTeam;
let auditor: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'admin', 'member']);
  auditor = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'] })).value;
});
afterAll(async () => { await server.close(); });

async function signedIn(role: 'owner' | 'admin' | 'member'): Promise<{ visitor: Visitor; csrf: string }> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(`${role}@example.com`, PASSWORD)).status).toBe(303);
  return { visitor, csrf: visitor.csrfFrom((await visitor.request('GET', '/panel')).text) };
}

const operationCount = async () => Number((await server.app.db.kysely.selectFrom('operations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const serverNames = async () => (await server.app.db.kysely.selectFrom('servers').select('name').where('team_id', '=', team.teamId).execute()).map((row) => row.name);

async function trailOf(email: string) {
  await server.app.audit.flush();
  const userId = (await findUserByEmail(server.app.db.kysely, email))?.id;
  const answer = await getJson(server.baseUrl, '/api/activity?action=create_server', auditor);
  expect(answer.status).toBe(200);
  return (answer.body.data as { member: { id: string } | null; token: unknown; channel: string; outcome: string; code: string | null; target: unknown }[])
    .filter((entry) => entry.member?.id === userId);
}

describe('New server', () => {
  it('is offered on the Overview to owners and admins, with a labelled name and capacity', async () => {
    for (const role of ['owner', 'admin'] as const) {
      const { visitor } = await signedIn(role);
      expect((await visitor.request('GET', '/panel')).text).toContain('<form method="get" action="/panel/servers/new"><button type="submit">New server</button></form>');
      const form = (await visitor.request('GET', '/panel/servers/new')).text;
      expect(form).toContain('<h1>New server</h1>');
      expect(form).toContain('<label for="server-name">Name</label>');
      expect(form).toContain('<input id="server-name" name="name" required maxlength="100" value="">');
      expect(form).toContain('<label for="server-capacity">Capacity');
      expect(form).toContain('<input id="server-capacity" name="capacity" type="number" min="1" max="200" step="1" required value="20">');
    }
  });

  it('is not offered to a member, and its page is refused to them', async () => {
    const { visitor } = await signedIn('member');
    expect((await visitor.request('GET', '/panel')).text).not.toContain('New server');
    const refused = await visitor.request('GET', '/panel/servers/new');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Only owners and admins of Test team create servers. You are a member; ask an owner or admin.');
  });

  it('refuses a post with 403 and creates nothing when the CSRF token is missing', async () => {
    const { visitor } = await signedIn('owner');
    const before = await operationCount();
    const answer = await visitor.request('POST', '/panel/servers', { name: 'Forged server', capacity: '5' });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('This form was not sent from the panel, or it expired.');
    expect(await operationCount()).toBe(before);
    expect(await serverNames()).not.toContain('Forged server');
  });

  it('refuses a post with 403 and creates nothing when it comes from another site, even with the CSRF token', async () => {
    const { visitor, csrf } = await signedIn('owner');
    const before = await operationCount();
    const elsewhere: Record<string, string>[] = [{ origin: 'https://elsewhere.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }];
    for (const headers of elsewhere) {
      const answer = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: 'Forged server', capacity: '5' }, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.text).toContain('This form was sent from another site.');
    }
    expect(await operationCount()).toBe(before);
    expect(await serverNames()).not.toContain('Forged server');
  });

  it('refuses a member\'s forced post with 403, recorded with the member as its actor', async () => {
    const { visitor, csrf } = await signedIn('member');
    const before = await operationCount();
    const answer = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: 'Mine', capacity: '5' });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('As a member of Test team you cannot do this: it needs servers:write, which your role does not include.');
    expect(await trailOf('member@example.com')).toEqual([
      expect.objectContaining({ channel: 'panel', token: null, outcome: 'denied', code: 'missing_permission' }),
    ]);
    expect(await operationCount()).toBe(before);
    expect(await serverNames()).not.toContain('Mine');
  });

  it('shows the API\'s sentence beside the capacity and the name it refuses, keeping what was typed, and creates nothing', async () => {
    const { visitor, csrf } = await signedIn('admin');
    const before = await operationCount();
    const tooBig = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: 'Big one', capacity: '500' });
    expect(tooBig.status).toBe(400);
    expect(tooBig.text).toMatch(/<input id="server-capacity" name="capacity" type="number" min="1" max="200" step="1" required value="500" aria-describedby="capacity-error" aria-invalid="true">\s*<p class="field-error" id="capacity-error" role="alert">Too big: expected number to be &lt;=200<\/p>/);
    expect(tooBig.text).toContain('value="Big one"');
    expect(tooBig.text).not.toContain('id="name-error"');
    const unnamed = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: ' ', capacity: '2.5' });
    expect(unnamed.status).toBe(400);
    expect(unnamed.text).toMatch(/aria-describedby="name-error" aria-invalid="true">\s*<p class="field-error" id="name-error" role="alert">Too small/);
    expect(unnamed.text).toContain('<p class="field-error" id="capacity-error" role="alert">Invalid input: expected int, received number</p>');
    expect(await operationCount()).toBe(before);
  });

  it('queues the create as the owner, recorded with the owner as its actor, and leads to the operation named by the server', async () => {
    const { visitor, csrf } = await signedIn('owner');
    const answer = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: 'Typed server', capacity: '7' });
    expect(answer.status).toBe(303);
    const operationId = /^\/panel\/operations\/(op_[0-9a-z]{20})$/.exec(answer.location ?? '')?.[1] as string;
    expect(operationId).toBeDefined();
    const row = await server.app.db.kysely.selectFrom('operations').select(['kind', 'server_id', 'requested_by_token_id', 'requested_by_user_id', 'requested_channel'])
      .where('id', '=', operationId).executeTakeFirstOrThrow();
    const owner = await findUserByEmail(server.app.db.kysely, 'owner@example.com');
    expect(row).toMatchObject({ kind: 'create_server', requested_by_token_id: null, requested_by_user_id: owner?.id, requested_channel: 'panel' });
    const token = (await makeToken(server.app, team.teamId)).value;
    expect((await getJson(server.baseUrl, `/api/servers/${String(row.server_id)}`, token)).body).toMatchObject({ name: 'Typed server', capacity: 7, state: 'provisioning' });
    expect(await trailOf('owner@example.com')).toEqual([
      expect.objectContaining({ channel: 'panel', token: null, outcome: 'allowed' }),
    ]);
    const followed = await visitor.request('GET', answer.location as string);
    expect(followed.text).toContain('<h1>Create a server: Typed server</h1>');
    expect(followed.text).toContain('<td class="state" data-live="state" aria-live="polite">queued</td>');
    expect(followed.text).toContain('<noscript><meta http-equiv="refresh" content="2"></noscript>');
  });

  it('leaves the capacity to the API\'s default when the field is empty', async () => {
    const { visitor, csrf } = await signedIn('admin');
    const answer = await visitor.request('POST', '/panel/servers', { _csrf: csrf, name: 'Default sized', capacity: '' });
    expect(answer.status).toBe(303);
    const created = await server.app.db.kysely.selectFrom('servers').select('capacity').where('name', '=', 'Default sized').executeTakeFirstOrThrow();
    expect(created.capacity).toBe(20);
  });
});
