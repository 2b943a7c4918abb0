// A service's backup schedule page over plain HTTP against the real server: owners and admins
// read and change it (CSRF-protected, names escaped), a bad field is refused naming it, failed
// scheduled backups are shown, members are refused, and another team's service does not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { readSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'schedule-page-password';
let server: TestServer;
let teamId: string;
let serviceId: string;
let otherTeamService: string;

beforeAll(async () => {
  server = await startTestServer();
  const db = server.app.db.kysely;
  teamId = await insertTeam(db, { name: 'Hosting', plan: 'business', timezone: 'America/New_York' });
  const serverId = await insertServer(db, { teamId, name: 'host' });
  serviceId = await insertService(db, { teamId, serverId, name: 'Shop <b>ERP</b>' });
  const other = await insertTeam(db, { name: 'Other', plan: 'starter', timezone: 'UTC' });
  otherTeamService = await insertService(db, { teamId: other, serverId: await insertServer(db, { teamId: other, name: 'theirs' }), name: 'Theirs' });
  await seedMembers(server.app, teamId, PASSWORD, ['owner', 'member']);
});
afterAll(async () => { await server.close(); });

async function signedIn(email: string): Promise<Visitor> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
  return visitor;
}

const path = (id: string) => `/panel/services/${id}/backup-schedule`;
const form = (csrf: string, change: Record<string, string> = {}) =>
  ({ _csrf: csrf, frequency: 'daily', time: '01:45', keep_daily: '5', keep_weekly: '2', keep_monthly: '3', ...change });

describe('the backup schedule page', () => {
  it('shows an owner the default schedule, in the team\'s time zone, with the service\'s name escaped, linked from the Overview', async () => {
    const owner = await signedIn('owner@example.com');
    const overview = await owner.request('GET', '/panel');
    expect(overview.text).toContain(`<a href="${path(serviceId)}">Backup schedule</a>`);
    const page = await owner.request('GET', path(serviceId));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Backup schedule of Shop &lt;b&gt;ERP&lt;/b&gt;');
    expect(page.text).not.toContain('<b>ERP</b>');
    expect(page.text).toContain("in the team's time zone, America/New_York");
    expect(page.text).toContain('<option value="daily" selected>Daily</option>');
    expect(page.text).toContain('name="keep_monthly" min="0" max="1000" required value="6"');
  });

  it('saves what an owner sends, as the API then reads it', async () => {
    const owner = await signedIn('owner@example.com');
    const page = await owner.request('GET', path(serviceId));
    const saved = await owner.request('POST', path(serviceId), form(owner.csrfFrom(page.text)));
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Schedule saved.');
    expect(await readSchedule(server.app.db.kysely, serviceId, Date.now())).toMatchObject({
      frequency: 'daily', time: '01:45', keep_daily: 5, keep_weekly: 2, keep_monthly: 3,
    });
  });

  it('refuses a bad time or count naming the field, and keeps the schedule it had', async () => {
    const owner = await signedIn('owner@example.com');
    const page = await owner.request('GET', path(serviceId));
    const before = await readSchedule(server.app.db.kysely, serviceId, Date.now());
    const badTime = await owner.request('POST', path(serviceId), form(owner.csrfFrom(page.text), { time: '25:99' }));
    expect(badTime.status).toBe(422);
    expect(badTime.text).toMatch(/The schedule was not saved\. time: Must be a time of day/);
    expect(badTime.text).toContain('value="25:99"');
    const badCount = await owner.request('POST', path(serviceId), form(owner.csrfFrom(page.text), { keep_daily: '0' }));
    expect(badCount.status).toBe(422);
    expect(badCount.text).toContain('keep_daily:');
    expect(await readSchedule(server.app.db.kysely, serviceId, Date.now())).toEqual(before);
  });

  it('refuses a form without the CSRF field', async () => {
    const owner = await signedIn('owner@example.com');
    const refused = await owner.request('POST', path(serviceId), form('forged'));
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Form expired');
  });

  it('shows the scheduled backups that failed lately', async () => {
    const at = new Date().toISOString();
    await server.app.db.kysely.insertInto('backups').values({
      id: newId('bak'), team_id: teamId, service_id: serviceId, state: 'failed', kind: 'scheduled', size_bytes: null, sha256: null,
      file_path: null, operation_id: null, reason: 'The disk is <full>.', created_at: at, completed_at: at,
    }).execute();
    const owner = await signedIn('owner@example.com');
    const page = await owner.request('GET', path(serviceId));
    expect(page.text).toContain('Scheduled backups that failed lately');
    expect(page.text).toContain('The disk is &lt;full&gt;.');
  });

  it('refuses members, and shows them no link', async () => {
    const member = await signedIn('member@example.com');
    expect((await member.request('GET', path(serviceId))).status).toBe(403);
    expect((await member.request('GET', '/panel')).text).not.toContain('Backup schedule');
  });

  it("answers 404 for another team's service", async () => {
    const owner = await signedIn('owner@example.com');
    expect((await owner.request('GET', path(otherTeamService))).status).toBe(404);
    const page = await owner.request('GET', path(serviceId));
    expect((await owner.request('POST', path(otherTeamService), form(owner.csrfFrom(page.text)))).status).toBe(404);
  });
});
