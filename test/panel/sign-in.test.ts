// Panel sign-in over plain HTTP: cookies, throttling, the team picker, sign-out, headers, audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/password.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import { seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

describe('panel sign-in', () => {
  let server: TestServer;
  let team: SeededTeam;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app, { name: 'First team' });
    const passwordHash = await hashPassword('right-password');
    await upsertMember(server.app.db.kysely, { teamId: team.teamId, email: 'solo@example.com', role: 'admin', passwordHash });
    await upsertMember(server.app.db.kysely, { teamId: team.teamId, email: 'multi@example.com', role: 'owner', passwordHash });
    const second = await insertTeam(server.app.db.kysely, { name: 'Second team', plan: 'starter', timezone: 'UTC' });
    await upsertMember(server.app.db.kysely, { teamId: second, email: 'multi@example.com', role: 'member', passwordHash });
    await upsertMember(server.app.db.kysely, { teamId: team.teamId, email: 'target@example.com', role: 'member', passwordHash });
  });
  afterAll(async () => { await server.close(); });

  it('sends a visitor without a session to the sign-in page', async () => {
    const visitor = new Visitor(server.baseUrl);
    const response = await visitor.request('GET', '/panel/developer/api-tokens');
    expect(response.status).toBe(302);
    expect(response.location).toBe('/panel/sign-in?next=%2Fpanel%2Fdeveloper%2Fapi-tokens');
  });

  it('sets an HttpOnly, SameSite=Lax session cookie and serves pages with a content security policy', async () => {
    const visitor = new Visitor(server.baseUrl);
    const response = await visitor.signIn('solo@example.com', 'right-password');
    expect(response.status).toBe(303);
    const cookie = response.headers.getSetCookie().find((header) => header.startsWith('teaminfra_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const overview = await visitor.request('GET', '/panel');
    expect(overview.status).toBe(200);
    expect(overview.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(overview.text).toContain('ERP A');
  });

  it('answers a wrong password and an unknown email the same way, and audits both', async () => {
    const wrong = await new Visitor(server.baseUrl).signIn('solo@example.com', 'nope-nope');
    const unknown = await new Visitor(server.baseUrl).signIn('nobody@example.com', 'nope-nope');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.text).toContain('The email or password is not right.');
    expect(unknown.text).toContain('The email or password is not right.');
    await server.app.audit.flush();
    const denials = await server.app.db.kysely.selectFrom('audit_log').selectAll()
      .where('channel', '=', 'panel').where('action', '=', 'sign_in').where('outcome', '=', 'denied').execute();
    expect(denials.map((row) => row.detail)).toEqual(expect.arrayContaining(['solo@example.com', 'nobody@example.com']));
  });

  it('throttles an email after five failed sign-ins, even with the right password', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect((await new Visitor(server.baseUrl).signIn('target@example.com', 'wrong-guess')).status).toBe(401);
    }
    const blocked = await new Visitor(server.baseUrl).signIn('target@example.com', 'right-password');
    expect(blocked.status).toBe(429);
    expect(blocked.text).toContain('Too many failed sign-ins');
  });

  it('tells a throttled sign-in when to retry with Retry-After', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) await new Visitor(server.baseUrl).signIn('ghost@example.com', 'wrong-again');
    const blocked = await new Visitor(server.baseUrl).signIn('ghost@example.com', 'wrong-again');
    expect(blocked.status).toBe(429);
    const seconds = Number(blocked.headers.get('retry-after'));
    expect(seconds).toBeGreaterThan(14 * 60);
    expect(seconds).toBeLessThanOrEqual(15 * 60);
  });

  it('asks a member of several teams to pick one', async () => {
    const visitor = new Visitor(server.baseUrl);
    const response = await visitor.signIn('multi@example.com', 'right-password');
    expect(response.location).toBe('/panel/teams');
    const picker = await visitor.request('GET', '/panel/teams');
    expect(picker.text).toContain('Second team');
    const chosen = await visitor.request('POST', '/panel/teams', { _csrf: visitor.csrfFrom(picker.text), team_id: team.teamId });
    expect(chosen.status).toBe(303);
    const overview = await visitor.request('GET', '/panel');
    expect(overview.text).toContain('First team');
  });

  it('signs out with the form, after which the old cookie no longer works', async () => {
    const visitor = new Visitor(server.baseUrl);
    await visitor.signIn('solo@example.com', 'right-password');
    const overview = await visitor.request('GET', '/panel');
    const copy = new Visitor(server.baseUrl);
    copy.cookies = new Map(visitor.cookies);
    expect((await visitor.request('POST', '/panel/sign-out', { _csrf: visitor.csrfFrom(overview.text) })).status).toBe(303);
    expect((await copy.request('GET', '/panel')).status).toBe(302);
  });

  it('ends the earlier session on the server when the same browser signs in again', async () => {
    const visitor = new Visitor(server.baseUrl);
    await visitor.signIn('solo@example.com', 'right-password');
    const earlier = new Visitor(server.baseUrl);
    earlier.cookies = new Map(visitor.cookies);
    expect((await earlier.request('GET', '/panel')).status).toBe(200);
    await visitor.signIn('solo@example.com', 'right-password');
    expect((await visitor.request('GET', '/panel')).status).toBe(200);
    expect((await earlier.request('GET', '/panel')).status).toBe(302);
  });

  it('refuses sign-out without the CSRF token', async () => {
    const visitor = new Visitor(server.baseUrl);
    await visitor.signIn('solo@example.com', 'right-password');
    expect((await visitor.request('POST', '/panel/sign-out', { _csrf: 'forged' })).status).toBe(403);
    expect((await visitor.request('GET', '/panel')).status).toBe(200);
  });
});
