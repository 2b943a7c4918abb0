// New service in the panel over plain HTTP, against the real server: the form offers the team's
// servers and the registered apps; a create is the member's, and the app's initial credentials
// are shown once, on the operation's page, to the member who created it and to no one else (the
// create's end is written as the engine writes it, its credentials sealed in the result, so no
// engine has to run an app here: test/e2e/initial-credentials-once.test.ts does the same).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../src/db/ids.js';
import { sealInitialCredentials } from '../../src/engine/apps/initial-credentials.js';
import { getJson, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'new-service-password';
let server: TestServer;
let team: SeededTeam;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'admin', 'member']);
});
afterAll(async () => { await server.close(); });

async function signedIn(role: 'owner' | 'admin' | 'member'): Promise<Visitor> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(`${role}@example.com`, PASSWORD)).status).toBe(303);
  return visitor;
}

describe('New service', () => {
  it('is offered to owners and admins, with the team\'s servers and the registered apps, and refused to a member', async () => {
    const admin = await signedIn('admin');
    expect((await admin.request('GET', '/panel')).text).toContain('<form method="get" action="/panel/services/new"><button type="submit">New service</button></form>');
    const form = (await admin.request('GET', '/panel/services/new')).text;
    for (const serverId of team.serverIds) expect(form).toContain(`<option value="${serverId}">`);
    expect(form).toContain('<option value="demo" selected>demo</option>');
    expect(form).toContain('<option value="tryton">tryton</option>');
    const member = await signedIn('member');
    const refused = await member.request('GET', '/panel/services/new');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Only owners and admins of Test team create services. You are a member; ask an owner or admin.');
  });

  it('shows the initial credentials once, on the create\'s page, to the member who created the service only', async () => {
    const owner = await signedIn('owner');
    const csrf = owner.csrfFrom((await owner.request('GET', '/panel/services/new')).text);
    const posted = await owner.request('POST', '/panel/services', { _csrf: csrf, name: 'With a login', server_id: team.serverIds[0], app: 'demo' });
    expect(posted.status).toBe(303);
    const operationId = posted.location?.split('/').at(-1) as string;
    const { service_id: serviceId } = await server.app.db.kysely.selectFrom('operations').select('service_id').where('id', '=', operationId).executeTakeFirstOrThrow();
    const result = JSON.stringify({ initial_credentials: sealInitialCredentials(server.app.secrets, serviceId as string, { login: 'admin', password: 'first-password' }) });
    await server.app.db.kysely.updateTable('operations').set({ state: 'succeeded', result, started_at: nowIso(), finished_at: nowIso() })
      .where('id', '=', operationId).execute();

    // Another member, and a token of the team, see no credentials and take none.
    const admin = await signedIn('admin');
    expect((await admin.request('GET', posted.location as string)).text).not.toContain('first-password');
    const token = (await makeToken(server.app, team.teamId)).value;
    expect((await getJson(server.baseUrl, `/api/operations/${operationId}`, token)).body.result).toBeNull();

    const shown = await owner.request('GET', posted.location as string);
    expect(shown.text).toContain('<strong>Copy these initial credentials now.</strong>');
    expect(shown.text).toContain('<tr><th>Login</th><td><code>admin</code></td></tr><tr><th>Password</th><td><code>first-password</code></td></tr>');
    const again = await owner.request('GET', posted.location as string);
    expect(again.text).not.toContain('first-password');
    expect(again.text).toMatch(/The initial credentials were shown once, at [\dTZ:.-]+, in the answer of get_operation in the panel, and are kept nowhere since\./);
  });
});
