// The Notifications page (which kinds of incident an owner or admin is emailed about) and the
// Overview's unhealthy services, over plain HTTP against the real server and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMemberNotificationKinds } from '../../src/db/repositories/incidents.js';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertService } from '../../src/db/repositories/services.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { changeServiceState } from '../../src/engine/state-changes.js';
import { inWriteTransaction } from '../../src/engine/write-transaction.js';
import { seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'notifications-test-password';

let server: TestServer;
let teamId: string;

beforeAll(async () => {
  server = await startTestServer();
  const db = server.app.db.kysely;
  teamId = await insertTeam(db, { name: 'Told', plan: 'business', timezone: 'UTC' });
  await seedMembers(server.app, teamId, PASSWORD, ['owner', 'member']);
});
afterAll(async () => {
  await server.close();
});

const signedIn = async (role: string) => {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(`${role}@example.com`, PASSWORD)).status).toBe(303);
  return visitor;
};
const checked = (text: string) => [...text.matchAll(/name="kinds" value="([a-z_]+)" checked/g)].map((match) => match[1]);

describe('GET and POST /panel/notifications', () => {
  it('offers an owner every kind, all chosen by default, and keeps what they choose', async () => {
    const owner = await signedIn('owner');
    const first = await owner.request('GET', '/panel/notifications');
    expect(first.status).toBe(200);
    expect(checked(first.text)).toEqual(['service_down', 'crash_loop', 'server_unreachable', 'backup_failed', 'certificate_failed']);
    expect(first.text).toContain('No email is sent yet');
    const saved = await owner.request('POST', '/panel/notifications', [
      ['_csrf', owner.csrfFrom(first.text)], ['kinds', 'service_down'], ['kinds', 'backup_failed'],
    ]);
    expect(saved.status).toBe(200);
    expect(checked(saved.text)).toEqual(['service_down', 'backup_failed']);
    const userId = (await server.app.db.kysely.selectFrom('users').select('id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow()).id;
    expect(await findMemberNotificationKinds(server.app.db.kysely, teamId, userId)).toBe('service_down,backup_failed');
    // Nothing chosen is a choice too: no email at all.
    const none = await owner.request('POST', '/panel/notifications', { _csrf: owner.csrfFrom(saved.text) });
    expect(checked(none.text)).toEqual([]);
  });

  it('refuses a member, who is never emailed, and shows them no link to it', async () => {
    const member = await signedIn('member');
    expect((await member.request('GET', '/panel/notifications')).status).toBe(403);
    expect((await member.request('GET', '/panel')).text).not.toContain('/panel/notifications');
  });

  it('refuses a change without the page\'s CSRF token', async () => {
    const owner = await signedIn('owner');
    expect((await owner.request('POST', '/panel/notifications', { kinds: 'crash_loop' })).status).toBe(403);
  });
});

describe('GET /panel (Overview) with unhealthy services', () => {
  it('shows the unhealthy services first, longest unhealthy first, with since when', async () => {
    const db = server.app.db.kysely;
    const serverId = await insertServer(db, { teamId, name: 'host' });
    await insertService(db, { teamId, serverId, name: 'Fine ERP', state: 'running' });
    const failedAt = ['2027-01-02T03:04:05.000Z', '2027-01-01T00:00:00.000Z'];
    for (const [index, name] of ['Later ERP', 'Earlier ERP'].entries()) {
      const id = await insertService(db, { teamId, serverId, name, state: 'running' });
      await inWriteTransaction(db, (trx) => changeServiceState(trx, id, { state: 'failed', reason: 'gone' }, { kind: 'reconcile', operationId: null }, failedAt[index]!));
    }
    const owner = await signedIn('owner');
    const page = (await owner.request('GET', '/panel')).text;
    const unhealthy = page.slice(page.indexOf('<h2>Unhealthy</h2>'), page.indexOf('<h2>ERP services</h2>'));
    expect(page.indexOf('<h2>Unhealthy</h2>')).toBeGreaterThan(-1);
    expect([...unhealthy.matchAll(/">([A-Za-z]+ ERP)<\/a>/g)].map((match) => match[1])).toEqual(['Earlier ERP', 'Later ERP']);
    expect(unhealthy).toContain('2027-01-01 00:00:00 UTC');
    expect(unhealthy).toContain('2027-01-02 03:04:05 UTC');
    expect(unhealthy).not.toContain('Fine ERP');
  });

  it('puts the longest unhealthy first even beyond the fifty it shows, and says more are unhealthy', async () => {
    const db = server.app.db.kysely;
    const serverId = await insertServer(db, { teamId, name: 'outage' });
    for (let index = 0; index < 55; index++) {
      const id = await insertService(db, { teamId, serverId, name: `Outage ${index} ERP`, state: 'running' });
      await inWriteTransaction(db, (trx) => changeServiceState(trx, id, { state: 'failed', reason: 'gone' }, { kind: 'reconcile', operationId: null }, '2027-02-01T00:00:00.000Z'));
    }
    // Made last (the largest id), unhealthy longest.
    const oldest = await insertService(db, { teamId, serverId, name: 'Oldest ERP', state: 'running' });
    await inWriteTransaction(db, (trx) => changeServiceState(trx, oldest, { state: 'failed', reason: 'gone' }, { kind: 'reconcile', operationId: null }, '2026-12-01T00:00:00.000Z'));
    const page = (await (await signedIn('owner')).request('GET', '/panel')).text;
    const unhealthy = page.slice(page.indexOf('<h2>Unhealthy</h2>'), page.indexOf('<h2>ERP services</h2>'));
    expect([...unhealthy.matchAll(/">([A-Za-z0-9 ]+ ERP)<\/a>/g)].map((match) => match[1])[0]).toBe('Oldest ERP');
    expect(unhealthy).toContain('More are unhealthy');
  });
});

