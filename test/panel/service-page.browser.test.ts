// A service's page in headless Chromium, with the engine running: from the Overview an owner
// opens a running service and sees its state, metrics, latest operations and logs (escaped), and
// lines written after the page loaded appear without a reload; a member sees state and
// operations, not the logs, and the live endpoint gives a member no lines. The token form offers
// services:logs.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, killProcessesMatching } from '../engine/support/engine-http.js';

const PASSWORD = 'service-page-browser-password';

describe('the service page in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let serviceId: string;
  let logFile: string;
  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
    const token = (await makeToken(server.app, team.teamId)).value;
    serviceId = team.serviceIds[0];
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded' });
    logFile = join(server.dataDir, 'servers', team.serverIds[0], serviceId, 'service.log');
    appendFileSync(logFile, 'known line one\n<b>not markup</b> \u001b[31mred\n');
    browser = await launchHeadless();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    const dataDir = server?.dataDir;
    await server?.close();
    if (dataDir) expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  it('shows an owner the state, metrics, operations and logs, and adds new lines without a reload', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await clickAndLoad(page, 'a:text-is("ERP A")');
    expect(new URL(page.url()).pathname).toBe(`/panel/services/${serviceId}`);
    expect(await page.locator('[data-live="state"]').textContent()).toBe('running');
    expect(await page.locator('[data-metric="Running"]').textContent()).toBe('yes');
    expect(await page.locator('[data-metric="Memory"]').textContent()).toMatch(/MiB of/);
    expect(await page.locator('table >> text=start').count()).toBeGreaterThan(0);
    const logs = page.locator('[data-live="logs"]');
    const text = (await logs.textContent()) ?? '';
    expect(text).toContain('known line one');
    expect(text).toContain('<b>not markup</b> \\x1b[31mred');
    expect(await logs.locator('b').count()).toBe(0);

    const loadedAt = await page.evaluate(() => performance.timeOrigin);
    appendFileSync(logFile, 'written after the page loaded\n');
    await logs.locator('span', { hasText: 'written after the page loaded' }).waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(loadedAt);
  });

  it('shows a member the state and operations but not the logs', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'member@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/services/${serviceId}`);
    expect(await page.locator('[data-live="state"]').textContent()).toBe('running');
    expect(await page.locator('[data-live="logs"]').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('Owners and admins see this service\'s logs here.');
    const live = await page.evaluate(async (url) => (await fetch(url)).json(), `/panel/services/${serviceId}/live?cursor=f0`);
    expect(live).toMatchObject({ state: 'running', logs: null });
  });

  it('offers services:logs on the API Tokens page\'s new-token form, under its own label', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    const box = page.locator('input[name="permissions"][value="services:logs"]');
    expect(await box.count()).toBe(1);
    expect((await page.locator('label', { has: box }).textContent())?.trim()).toMatch(/^Read ERP service logs\s+services:logs$/);
  });

  it('answers 404 for a service of another team', async () => {
    const other = await seedTeam(server.app, { name: 'Other team' });
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    const response = await page.goto(`${server.baseUrl}/panel/services/${other.serviceIds[0]}`);
    expect(response?.status()).toBe(404);
  });
});
