// The API Tokens page in a real browser: an owner creates a narrow token, uses it over REST,
// widens it, revokes it; a plain member is refused; names are shown as text; CSRF holds.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { connectHttp } from '../mcp/clients.js';
import { getJson, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const PASSWORD = 'panel-test-password';

describe('Developer > API Tokens in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
    browser = await launchHeadless();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const signIn = (email: string, password = PASSWORD): Promise<Page> => signInToPanel(browser, server.baseUrl, email, password);

  it('creates a token limited to one ERP service with Read ERP services, widens it, then revokes it', async () => {
    const page = await signIn('owner@example.com');
    await clickAndLoad(page, 'text=API Tokens');
    await clickAndLoad(page, 'text=Create a token');
    await page.fill('input[name=name]', 'Status dashboard');
    await page.check('input[name=accepted_by][value=both]');
    await page.check('input[name=access][value=selected]');
    await page.check('input[name=permissions][value="services:read"]');
    await page.check('input[name=restrict_services]');
    await page.check(`input[name=services][value="${team.serviceIds[0]}"]`);
    await clickAndLoad(page, 'button:has-text("Create token")');
    expect((await page.locator('h1').textContent())?.trim()).toBe('Token created');

    // The copy button puts the value on the clipboard; that is how a person takes it.
    await page.click('button:has-text("Copy")');
    const value = await page.evaluate(() => navigator.clipboard.readText());
    expect(value).toMatch(/^tinf_/);
    expect(await page.inputValue('#token-value')).toBe(value);

    const listed = await getJson(server.baseUrl, '/api/service-erp', value);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((service: { id: string }) => service.id)).toEqual([team.serviceIds[0]]);

    // Accepted by both: the MCP server lists the same one service.
    const mcp = await connectHttp(server.baseUrl, value);
    const viaMcp = await mcp.client.callTool({ name: 'list_erp_services', arguments: {} });
    await mcp.close();
    expect((viaMcp.structuredContent as { data: { id: string }[] }).data.map((service) => service.id)).toEqual([team.serviceIds[0]]);

    // Shown once: the list page never carries the value again.
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(await page.content()).not.toContain(value);
    const row = page.locator('tr', { hasText: 'Status dashboard' });
    expect(await row.textContent()).toContain('Read ERP services (and their copies)');
    expect(await row.textContent()).toContain('Only ERP services: ERP A');

    const start = () => fetch(`${server.baseUrl}/api/service-erp/${team.serviceIds[0]}/start`, {
      method: 'POST', headers: { Authorization: `Bearer ${value}`, Accept: 'application/json' },
    });
    const denied = await start();
    expect(denied.status).toBe(403);
    expect((await denied.json()).detail).toBe('This API token does not have the services:operate scope.');

    await clickAndLoad(page, row.locator('text=Edit access'));
    await page.check('input[name=permissions][value="services:operate"]');
    await clickAndLoad(page, 'button:has-text("Save access")');
    await page.waitForURL(`${server.baseUrl}/panel/developer/api-tokens`);
    // Same value, wider access, on the very next request.
    const started = await start();
    expect(started.status).toBe(202);
    expect(await started.json()).toMatchObject({ kind: 'start', service_id: team.serviceIds[0] });

    await clickAndLoad(page, page.locator('tr', { hasText: 'Status dashboard' }).locator('text=Revoke'));
    expect(await page.locator('main').textContent()).toContain('stops working at once');
    await clickAndLoad(page, 'button:has-text("Revoke token")');
    await page.waitForURL(`${server.baseUrl}/panel/developer/api-tokens`);
    expect((await page.locator('tr', { hasText: 'Status dashboard' }).locator('.state').textContent())?.trim()).toBe('revoked');
    expect((await getJson(server.baseUrl, '/api/service-erp', value)).status).toBe(401);

    await server.app.audit.flush();
    const owner = await server.app.db.kysely.selectFrom('users').select('id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow();
    const actions = await server.app.db.kysely.selectFrom('audit_log').select(['action', 'actor_id', 'channel'])
      .where('actor_type', '=', 'user').where('action', 'like', '%token%').orderBy('id').execute();
    expect(actions).toEqual(['create_token', 'update_token_access', 'revoke_token']
      .map((action) => ({ action, actor_id: owner.id, channel: 'panel' })));
    await page.context().close();
  });

  it('refuses the page to a member who is not an owner or admin', async () => {
    const page = await signIn('member@example.com');
    const response = await page.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(response?.status()).toBe(403);
    expect(await page.locator('main').textContent()).toContain('Only owners and admins');
    const post = await page.request.post(`${server.baseUrl}/panel/developer/api-tokens`, { form: { name: 'sneaky' } });
    expect(post.status()).toBe(403);
    await page.context().close();
  });

  it('shows a service named with HTML and script as text', async () => {
    const hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    await server.app.db.kysely.updateTable('erp_services').set({ name: hostile }).where('id', '=', team.serviceIds[1]).execute();
    const page = await signIn('owner@example.com');
    expect((await page.locator('td', { hasText: '<script>' }).first().textContent())?.trim()).toBe(hostile);
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    expect(await page.locator('label', { hasText: '<img' }).textContent()).toContain(hostile);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    await page.context().close();
  });

  it('refuses a form posted without the CSRF token and changes nothing', async () => {
    const page = await signIn('owner@example.com');
    const before = await server.app.db.kysely.selectFrom('api_tokens').select('id').execute();
    const response = await page.request.post(`${server.baseUrl}/panel/developer/api-tokens`, {
      form: { name: 'forged', accepted_by: 'both', access: 'full' },
    });
    expect(response.status()).toBe(403);
    expect(await response.text()).toContain('This form was not sent from the panel');
    const after = await server.app.db.kysely.selectFrom('api_tokens').select('id').execute();
    expect(after).toHaveLength(before.length);
    await page.context().close();
  });
});
