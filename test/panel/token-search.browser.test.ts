// The token form's service search in a real browser, in a team of 10,000 ERP services: the form
// lists only the first few, the search field asks the panel for matches as the owner types, and
// the token created with the service found is limited to exactly it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertServer } from '../../src/db/repositories/servers.js';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { CHOICE_MATCHES } from '../../src/panel/token-choices.js';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { getJson, seedMembers, startTestServer, type TestServer } from '../support/fixtures.js';
import { insertManyServices } from '../support/many-services.js';

const PASSWORD = 'search-test-password';
const SERVICES = 10_000;

describe('the token form\'s service search in headless Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let serviceIds: string[];

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.app.db.kysely;
    const teamId = await insertTeam(db, { name: 'Hosting company', plan: 'business', timezone: 'UTC' });
    const serverId = await insertServer(db, { teamId, name: 'host-1' });
    serviceIds = await insertManyServices(db, teamId, serverId, Array.from({ length: SERVICES }, (_, i) => `Customer ${i + 1} ERP`));
    await seedMembers(server.app, teamId, PASSWORD, ['owner']);
    browser = await launchHeadless();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('finds a service among 10,000 by name and creates a token limited to it', async () => {
    const wanted = serviceIds[7344]!;
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    expect(await page.locator('input[name=services]').count()).toBe(CHOICE_MATCHES);
    expect(await page.locator(`input[name=services][value="${wanted}"]`).count()).toBe(0);

    await page.fill('input[name=name]', 'Customer 7345 dashboard');
    await page.check('input[name=access][value=selected]');
    await page.check('input[name=permissions][value="services:read"]');
    await page.check('input[name=restrict_services]');
    await page.fill('input[name=service_search]', 'customer 7345 erp');
    await page.locator(`input[name=services][value="${wanted}"]`).waitFor();
    expect(await page.locator('[data-choices-list=services] label').allTextContents()).toEqual([' Customer 7345 ERP']);
    await page.check(`input[name=services][value="${wanted}"]`);
    // Another search keeps the box ticked.
    await page.fill('input[name=service_search]', 'customer 12 ');
    await page.waitForFunction(() => document.querySelector('[data-choices-list=services]')?.getAttribute('data-searched') === 'customer 12 ');
    expect(await page.isChecked(`input[name=services][value="${wanted}"]`)).toBe(true);
    // Enter in the name field creates the token: "Find" no longer sends the form once the script runs.
    await Promise.all([page.waitForEvent('load'), page.press('input[name=name]', 'Enter')]);
    expect((await page.locator('h1').textContent())?.trim()).toBe('Token created');
    const value = await page.inputValue('#token-value');

    const listed = await getJson(server.baseUrl, '/api/service-erp', value);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((service: { id: string }) => service.id)).toEqual([wanted]);
    await clickAndLoad(page, 'text=Back to API Tokens');
    expect(await page.locator('tr', { hasText: 'Customer 7345 dashboard' }).textContent()).toContain('Only ERP services: Customer 7345 ERP');
    await page.context().close();
  });

  it('says to type more of the name while a search stopped before reading every name, and no more once one did not', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    const stopped = page.locator('[data-choices-stopped=services]');
    expect(await stopped.isVisible()).toBe(false);
    // Two characters no name holds: the walk reads 1,000 of the 10,000 names and stops (issue 37).
    await page.fill('input[name=service_search]', 'zq');
    await stopped.waitFor({ state: 'visible' });
    expect(await page.locator('[data-choices-list=services] label').count()).toBe(0);
    await page.fill('input[name=service_search]', 'customer 9999 erp');
    await stopped.waitFor({ state: 'hidden' });
    expect(await page.locator('[data-choices-list=services] label').allTextContents()).toEqual([' Customer 9999 ERP']);
    await page.context().close();
  });
});
