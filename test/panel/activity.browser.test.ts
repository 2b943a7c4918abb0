// The Activity page in a real browser: an owner opens it from the API Tokens page through one
// token's "Activity" link and sees that token's entries only; the filter form narrows the whole
// trail to another token and to an outcome; names people gave are shown as text, never markup;
// a member is refused the page.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const PASSWORD = 'activity-browser-password';

describe('the Activity page in headless Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let team: SeededTeam;
  let robot: { id: string; value: string };
  let reader: { id: string; value: string };

  const post = (path: string, token: string) => fetch(server.baseUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });

  beforeAll(async () => {
    server = await startTestServer();
    team = await seedTeam(server.app, { name: 'Acme' });
    robot = await makeToken(server.app, team.teamId, { name: '<b>deploy</b> robot' });
    reader = await makeToken(server.app, team.teamId, { name: 'status reader', permissions: ['services:read'] });
    expect((await post(`/api/service-erp/${team.serviceIds[0]}/start`, robot.value)).status).toBe(202);
    expect((await post(`/api/service-erp/${team.serviceIds[1]}/start`, robot.value)).status).toBe(202);
    expect((await post(`/api/service-erp/${team.serviceIds[0]}/stop`, reader.value)).status).toBe(403);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
    await server.app.audit.flush();
    browser = await launchHeadless();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const rowsOf = async (page: import('playwright-core').Page) =>
    (await page.locator('#activity tbody tr').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());

  it('opens one token\'s activity from the API Tokens page, then filters by another token and an outcome', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    await clickAndLoad(page, page.locator(`tr[data-token-id="${robot.id}"] a`, { hasText: 'Activity' }));
    expect(new URL(page.url()).search).toBe(`?token=${robot.id}`);
    const robotRows = await rowsOf(page);
    expect(robotRows).toHaveLength(2);
    for (const row of robotRows) expect(row).toMatch(/<b>deploy<\/b> robot token · panel REST API start_erp_service service svc_\w+ allowed/);
    expect(await page.locator('#activity b').count()).toBe(0);

    await page.selectOption('select[name=token]', reader.id);
    await clickAndLoad(page, page.locator('button', { hasText: 'Filter' }));
    expect(await rowsOf(page)).toEqual([expect.stringMatching(/^\S+ \S+ status reader token · panel REST API stop_erp_service service svc_\w+ denied missing_permission$/)]);

    await page.selectOption('select[name=token]', '');
    await page.selectOption('select[name=outcome]', 'allowed');
    await clickAndLoad(page, page.locator('button', { hasText: 'Filter' }));
    const allowed = await rowsOf(page);
    expect(allowed.filter((row) => row.includes('start_erp_service'))).toHaveLength(2);
    expect(allowed.some((row) => row.includes('stop_erp_service'))).toBe(false);
    // The owner's own sign-in is on the trail too, as a panel action.
    expect(allowed.some((row) => /owner@example\.com member Panel sign_in/.test(row))).toBe(true);
  });

  it('refuses a member with a sentence', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'member@example.com', PASSWORD);
    const response = await page.goto(`${server.baseUrl}/panel/activity`);
    expect(response?.status()).toBe(403);
    expect(await page.locator('main').innerText()).toContain('Only owners and admins of Acme can open the Activity page.');
  });
});
