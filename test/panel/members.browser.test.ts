// Members and replacing tokens, in headless Chromium: tokens survive their creator's removal,
// a replaced token is refused at once, and a team always keeps an owner.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/password.js';
import { upsertMember } from '../../src/db/repositories/teams.js';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { connectHttp } from '../mcp/clients.js';
import { getJson, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const PASSWORD = 'members-test-password';

describe('Members and token replacement in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    const passwordHash = await hashPassword(PASSWORD);
    for (const [email, role] of [['owner@example.com', 'owner'], ['admin@example.com', 'admin'], ['leaver@example.com', 'admin']] as const) {
      await upsertMember(server.app.db.kysely, { teamId: team.teamId, email, role, passwordHash });
    }
    browser = await launchHeadless();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const signIn = (email: string, password = PASSWORD): Promise<Page> => signInToPanel(browser, server.baseUrl, email, password);

  async function createTokenOnPage(page: Page, name: string): Promise<string> {
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    await page.fill('input[name=name]', name);
    await page.check('input[name=access][value=selected]');
    await page.check('input[name=permissions][value="services:read"]');
    await page.check('input[name=restrict_services]');
    await page.check(`input[name=services][value="${team.serviceIds[1]}"]`);
    await clickAndLoad(page, 'button:has-text("Create token")');
    return page.inputValue('#token-value');
  }

  const serviceIdsListedBy = async (value: string) =>
    (await getJson(server.baseUrl, '/api/service-erp', value)).body?.data?.map((service: { id: string }) => service.id);

  it('keeps a token working after the admin who created it is removed, and ends their session', async () => {
    const leaver = await signIn('leaver@example.com');
    const value = await createTokenOnPage(leaver, 'Made by the leaver');
    expect(await serviceIdsListedBy(value)).toEqual([team.serviceIds[1]]);

    const owner = await signIn('owner@example.com');
    await owner.goto(`${server.baseUrl}/panel/members`);
    await clickAndLoad(owner, owner.locator('tr[data-email="leaver@example.com"] button:has-text("Remove")'));
    await owner.waitForURL(`${server.baseUrl}/panel/members`);
    expect(await owner.locator('tr[data-email="leaver@example.com"]').count()).toBe(0);

    expect(await serviceIdsListedBy(value)).toEqual([team.serviceIds[1]]);
    const mcp = await connectHttp(server.baseUrl, value);
    const viaMcp = await mcp.client.callTool({ name: 'list_erp_services', arguments: {} });
    await mcp.close();
    expect((viaMcp.structuredContent as { data: { id: string }[] }).data.map((service) => service.id)).toEqual([team.serviceIds[1]]);
    await owner.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(await owner.locator('tr', { hasText: 'Made by the leaver' }).textContent()).toContain('leaver@example.com (removed from the team)');

    // The removed member's cookie no longer opens anything.
    const response = await leaver.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(leaver.url()).toContain('/panel/sign-in');
    expect(response?.status()).toBe(200);
    await leaver.context().close();
    await owner.context().close();
  });

  it('replaces a compromised token: the old value gets 401 at once, the new one has the same restrictions', async () => {
    const owner = await signIn('owner@example.com');
    const oldValue = await createTokenOnPage(owner, 'Leaked in a log');
    await owner.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    await clickAndLoad(owner, owner.locator('tr', { hasText: 'Leaked in a log' }).locator('text=Replace'));
    await clickAndLoad(owner, 'button:has-text("Revoke and replace")');
    const newValue = await owner.inputValue('#token-value');
    expect(newValue).not.toBe(oldValue);

    expect((await getJson(server.baseUrl, '/api/service-erp', oldValue)).status).toBe(401);
    expect(await serviceIdsListedBy(newValue)).toEqual([team.serviceIds[1]]);
    expect((await getJson(server.baseUrl, '/api/servers', newValue)).body.code).toBe('missing_permission');

    await server.app.audit.flush();
    const revocation = await server.app.db.kysely.selectFrom('audit_log').select(['code', 'detail'])
      .where('channel', '=', 'api').where('outcome', '=', 'denied').where('detail', '=', 'revoked').executeTakeFirst();
    expect(revocation).toEqual({ code: 'invalid_token', detail: 'revoked' });
    const replaced = await server.app.db.kysely.selectFrom('audit_log').select('action').where('action', '=', 'replace_token').execute();
    expect(replaced).toHaveLength(1);
    await owner.context().close();
  });

  it('never removes or demotes the last owner, and an admin cannot demote an owner', async () => {
    const owner = await signIn('owner@example.com');
    await owner.goto(`${server.baseUrl}/panel/members`);
    await owner.locator('tr[data-email="owner@example.com"] select').selectOption('admin');
    await clickAndLoad(owner, owner.locator('tr[data-email="owner@example.com"] button:has-text("Change role")'));
    expect(await owner.locator('main').textContent()).toContain('A team always keeps at least one owner');
    await owner.goto(`${server.baseUrl}/panel/members`);
    await clickAndLoad(owner, owner.locator('tr[data-email="owner@example.com"] button:has-text("Remove")'));
    expect(await owner.locator('main').textContent()).toContain('A team always keeps at least one owner');

    const admin = await signIn('admin@example.com');
    await admin.goto(`${server.baseUrl}/panel/members`);
    await admin.locator('tr[data-email="owner@example.com"] select').selectOption('member');
    await clickAndLoad(admin, admin.locator('tr[data-email="owner@example.com"] button:has-text("Change role")'));
    expect(await admin.locator('main').textContent()).toContain('Only an owner can change the role of an owner.');
    await admin.goto(`${server.baseUrl}/panel/members`);
    await admin.locator('tr[data-email="admin@example.com"] select').selectOption('owner');
    await clickAndLoad(admin, admin.locator('tr[data-email="admin@example.com"] button:has-text("Change role")'));
    expect(await admin.locator('main').textContent()).toContain('you cannot give a role above your own');

    const roles = await server.app.db.kysely.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['u.email', 'm.role']).where('m.team_id', '=', team.teamId).where('m.removed_at', 'is', null).orderBy('u.email').execute();
    expect(roles).toEqual([{ email: 'admin@example.com', role: 'admin' }, { email: 'owner@example.com', role: 'owner' }]);
    await owner.context().close();
    await admin.context().close();
  });

  it('invites a person with a link that lets them set a password and sign in', async () => {
    const owner = await signIn('owner@example.com');
    await owner.goto(`${server.baseUrl}/panel/members`);
    await owner.fill('input[name=email]', 'newcomer@example.com');
    await owner.locator('form[action="/panel/members/invitations"] select').selectOption('member');
    await clickAndLoad(owner, 'button:has-text("Create invitation link")');
    const link = await owner.inputValue('#invitation-link');
    expect(link).toMatch(/\/panel\/invitations\//);

    const newcomer = await (await browser.newContext()).newPage();
    await newcomer.goto(link);
    await newcomer.fill('input[name=password]', 'a-long-new-password');
    await newcomer.click('button:has-text("Join the team")');
    await newcomer.waitForURL(/\/panel\/sign-in/);
    const signedIn = await signIn('newcomer@example.com', 'a-long-new-password');
    // A member, not an admin: the API Tokens page is refused.
    const refused = await signedIn.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(refused?.status()).toBe(403);
    // The link works once.
    expect((await newcomer.goto(link))?.status()).toBe(404);
    for (const page of [owner, newcomer, signedIn]) await page.context().close();
  });
});
