// The service page's actions and the panel's other new forms over plain HTTP, against the real
// server (no engine: an action's operation stays queued, which is all these tests read): every
// new form refuses a post without its CSRF token and one from another site; a member sees the
// buttons of their role only, and a forced post of another action is refused by invoke() (403)
// and is in the activity trail with the member as its actor; an owner's action is recorded the
// same way; the API's sentences are shown beside the field; Delete wants the name typed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../src/db/ids.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { findUserByEmail } from '../../src/db/repositories/teams.js';
import { getJson, insertCompletedBackup, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'service-actions-password';
let server: TestServer;
let team: SeededTeam;
let backupId: string;
let auditor: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'admin', 'member']);
  const file = join(server.dataDir, 'backup.sqlite.gz');
  writeFileSync(file, 'not really a backup');
  backupId = await insertCompletedBackup(server.app, { teamId: team.teamId, serviceId: team.serviceIds[1], filePath: file, bytes: Buffer.from('not really a backup') });
  auditor = (await makeToken(server.app, team.teamId, { permissions: ['activity:read'] })).value;
});
afterAll(async () => { await server.close(); });

async function signedIn(role: 'owner' | 'admin' | 'member'): Promise<{ visitor: Visitor; csrf: string }> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(`${role}@example.com`, PASSWORD)).status).toBe(303);
  return { visitor, csrf: visitor.csrfFrom((await visitor.request('GET', '/panel')).text) };
}

const operationCount = async () => Number((await server.app.db.kysely.selectFrom('operations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** Every form this page of the panel added, with a body that would be accepted. */
const forms = (): [string, Record<string, string>][] => [
  [`/panel/services/${team.serviceIds[0]}/start`, {}],
  [`/panel/services/${team.serviceIds[0]}/stop`, {}],
  [`/panel/services/${team.serviceIds[0]}/redeploy`, {}],
  [`/panel/services/${team.serviceIds[0]}/backups`, {}],
  [`/panel/services/${team.serviceIds[0]}/copies`, { name: 'Forged copy' }],
  [`/panel/services/${team.serviceIds[0]}/move`, { server_id: team.serverIds[0] }],
  [`/panel/services/${team.copyId}/delete`, { confirm_name: 'ERP A copy' }],
  ['/panel/services', { name: 'Forged service', server_id: team.serverIds[0], app: 'demo' }],
  [`/panel/backups/${backupId}/download`, {}],
  [`/panel/backups/${backupId}/restore`, {}],
  ['/panel/emails/eml_00000000000000000000/download', {}],
];

async function memberTrail(email: string, action: string) {
  await server.app.audit.flush();
  const userId = (await findUserByEmail(server.app.db.kysely, email))?.id;
  const answer = await getJson(server.baseUrl, `/api/activity?action=${action}`, auditor);
  expect(answer.status).toBe(200);
  return (answer.body.data as { member: { id: string } | null; channel: string; outcome: string; code: string | null; target: unknown }[])
    .filter((entry) => entry.member?.id === userId);
}

describe('the panel\'s service forms', () => {
  it('refuses each with 403 and queues nothing when the CSRF token is missing', async () => {
    const { visitor } = await signedIn('owner');
    const before = await operationCount();
    for (const [path, body] of forms()) {
      const answer = await visitor.request('POST', path, body);
      expect(answer.status, path).toBe(403);
      expect(answer.text, path).toContain('This form was not sent from the panel, or it expired.');
    }
    expect(await operationCount()).toBe(before);
  });

  it('refuses each with 403 and queues nothing when it comes from another site, even with the CSRF token', async () => {
    const { visitor, csrf } = await signedIn('owner');
    const before = await operationCount();
    for (const [path, body] of forms()) {
      const answer = await visitor.request('POST', path, { ...body, _csrf: csrf }, { origin: 'https://elsewhere.example' });
      expect(answer.status, path).toBe(403);
      expect(answer.text, path).toContain('This form was sent from another site.');
    }
    expect(await operationCount()).toBe(before);
  });
});

describe('a member on the service page', () => {
  it('sees Start, Stop, Redeploy and Back up now, and not Make a copy, Delete, Download, Restore or Caught emails', async () => {
    const { visitor } = await signedIn('member');
    const page = (await visitor.request('GET', `/panel/services/${team.serviceIds[0]}`)).text;
    for (const label of ['Start', 'Stop', 'Redeploy', 'Back up now']) expect(page).toContain(`<button type="submit">${label}</button>`);
    for (const label of ['Make a copy', 'Move', 'Delete']) expect(page).not.toContain(`>${label}</button>`);
    expect(page).not.toContain('Caught emails');
    const backups = (await visitor.request('GET', `/panel/services/${team.serviceIds[1]}/backups`)).text;
    expect(backups).toContain(backupId);
    expect(backups).not.toContain('>Download</button>');
    expect(backups).not.toContain('>Restore</button>');
    expect((await visitor.request('GET', '/panel')).text).not.toContain('New service');
  });

  it('is refused a forced Delete, Restore, Download, copy and create with 403, each recorded with the member as its actor', async () => {
    const { visitor, csrf } = await signedIn('member');
    const before = await operationCount();
    const forced: [string, Record<string, string>, string, string][] = [
      [`/panel/services/${team.copyId}/delete`, { confirm_name: 'ERP A copy' }, 'delete_erp_service', 'services:write'],
      [`/panel/backups/${backupId}/restore`, {}, 'restore_backup', 'backups:restore'],
      [`/panel/backups/${backupId}/download`, {}, 'download_backup', 'backups:download'],
      [`/panel/services/${team.serviceIds[0]}/copies`, { name: 'Mine' }, 'create_copy', 'services:write'],
      [`/panel/services/${team.serviceIds[0]}/move`, { server_id: team.serverIds[0] }, 'move_erp_service', 'services:write'],
      ['/panel/services', { name: 'Mine', server_id: team.serverIds[0] }, 'create_erp_service', 'services:write'],
    ];
    for (const [path, body, action, permission] of forced) {
      const answer = await visitor.request('POST', path, { ...body, _csrf: csrf });
      expect(answer.status, path).toBe(403);
      expect(answer.text, path).toContain(`As a member of Test team you cannot do this: it needs ${permission}, which your role does not include.`);
      expect(await memberTrail('member@example.com', action), action).toEqual([
        expect.objectContaining({ channel: 'panel', outcome: 'denied', code: 'missing_permission' }),
      ]);
    }
    expect(await operationCount()).toBe(before);
  });

  it('starts a service, recorded with the member as its actor, and is led to the operation', async () => {
    const { visitor, csrf } = await signedIn('member');
    const answer = await visitor.request('POST', `/panel/services/${team.serviceIds[1]}/start`, { _csrf: csrf });
    expect(answer.status).toBe(303);
    const operationId = /^\/panel\/operations\/(op_[0-9a-z]{20})$/.exec(answer.location ?? '')?.[1];
    expect(operationId).toBeDefined();
    const row = await server.app.db.kysely.selectFrom('operations').select(['kind', 'requested_by_token_id', 'requested_by_user_id', 'requested_channel'])
      .where('id', '=', operationId as string).executeTakeFirstOrThrow();
    const member = await findUserByEmail(server.app.db.kysely, 'member@example.com');
    expect(row).toEqual({ kind: 'start', requested_by_token_id: null, requested_by_user_id: member?.id, requested_channel: 'panel' });
    expect(await memberTrail('member@example.com', 'start_erp_service')).toEqual([
      expect.objectContaining({ channel: 'panel', outcome: 'allowed', target: { type: 'service', id: team.serviceIds[1] } }),
    ]);
    const followed = await visitor.request('GET', answer.location as string);
    expect(followed.status).toBe(200);
    expect(followed.text).toContain('<td class="state" data-live="state" aria-live="polite">queued</td>');
    expect(followed.text).toContain('<noscript><meta http-equiv="refresh" content="2"></noscript>');
  });
});

describe('what a form says when the API refuses it', () => {
  it('shows the API\'s sentence beside the name of a copy it refuses, and queues nothing', async () => {
    const { visitor, csrf } = await signedIn('admin');
    const before = await operationCount();
    const answer = await visitor.request('POST', `/panel/services/${team.serviceIds[0]}/copies`, { _csrf: csrf, name: 'Bell\u0007copy' });
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/<input id="copy-name" name="name" maxlength="100" value="Bell\u0007copy" aria-describedby="name-error" aria-invalid="true">\s*<p class="field-error" id="name-error" role="alert">Must not contain control characters/);
    expect(await operationCount()).toBe(before);
  });

  it('shows the API\'s sentences beside the fields of a new service it refuses', async () => {
    const { visitor, csrf } = await signedIn('owner');
    const answer = await visitor.request('POST', '/panel/services', { _csrf: csrf, name: '', server_id: 'srv_not_an_id', app: 'demo' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('<p class="field-error" id="name-error" role="alert">Too small');
    expect(answer.text).toContain('<p class="field-error" id="server_id-error" role="alert">');
    const unknownApp = await visitor.request('POST', '/panel/services', { _csrf: csrf, name: 'Fine', server_id: team.serverIds[0], app: 'nothing-of-the-kind' });
    expect(unknownApp.status).toBe(400);
    expect(unknownApp.text).toContain('There is no app named &quot;nothing-of-the-kind&quot;.');
    expect(unknownApp.text).toContain('value="Fine"');
  });

  it('offers an admin to move a Docker service to the team\'s other Docker servers, and shows the API\'s refusal beside the server, queuing nothing', async () => {
    const db = server.app.db.kysely;
    const [from, to] = [await insertServer(db, { teamId: team.teamId, name: 'docker-from' }), await insertServer(db, { teamId: team.teamId, name: 'docker-to' })];
    // Both on one engine: the move is refused before anything is touched, which is what this test reads.
    for (const id of [from, to]) {
      await db.insertInto('docker_servers').values({ server_id: id, docker_host: 'unix:///nonexistent/docker.sock', image: null, created_at: nowIso() }).execute();
    }
    const serviceId = await insertService(db, { teamId: team.teamId, serverId: from, name: 'Movable' });
    const { visitor, csrf } = await signedIn('admin');
    const page = (await visitor.request('GET', `/panel/services/${serviceId}`)).text;
    expect(page).toContain('<button type="submit">Move</button>');
    expect(page).toContain(`<option value="${to}">docker-to</option>`);
    expect(page).not.toContain(`<option value="${from}">`);
    const before = await operationCount();
    const answer = await visitor.request('POST', `/panel/services/${serviceId}/move`, { _csrf: csrf, server_id: to });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('<p class="field-error" id="server_id-error" role="alert">That server is the same Docker engine as the service&#39;s: choose a server on another engine.</p>');
    expect(answer.text).toContain(`<option value="${to}" selected>docker-to</option>`);
    expect(await operationCount()).toBe(before);
  });

  it('deletes nothing when the name typed is not the service\'s, and says so beside the field', async () => {
    const { visitor, csrf } = await signedIn('owner');
    const before = await operationCount();
    const answer = await visitor.request('POST', `/panel/services/${team.copyId}/delete`, { _csrf: csrf, confirm_name: 'ERP A' });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('<p class="field-error" id="confirm_name-error" role="alert">Type the service&#39;s name exactly, “ERP A copy”, to delete it. Nothing was deleted.</p>');
    expect(await operationCount()).toBe(before);
  });
});
