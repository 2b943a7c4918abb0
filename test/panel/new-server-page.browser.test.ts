// An owner creates a server from the panel by clicking, in headless Chromium, against the real
// server with the engine running (the local driver of `npm start`): New server on the Overview,
// the fields found by their labels (as a screen reader names them), the API's refusal read beside
// the field it is about, then Create server followed to its end on the operation's page, and the
// server checked through the REST API.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { getJson, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const PASSWORD = 'new-server-browser-password';
const OPERATION_SECONDS = 60;

describe('New server in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    token = (await makeToken(server.app, team.teamId)).value;
    browser = await launchHeadless();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lets an owner create a server by clicking, and the API then lists it ready with its capacity', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await clickAndLoad(page, 'button:text-is("New server")');
    expect(await page.locator('h1').textContent()).toBe('New server');

    // Blanks pass the browser's `required` but not the API: its sentence is beside the name, tied to it.
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('Capacity').fill('3');
    await clickAndLoad(page, 'button:text-is("Create server")');
    const name = page.getByLabel('Name');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${String(await name.getAttribute('aria-describedby'))}`).textContent()).toMatch(/^Too small/);
    expect(await page.getByLabel('Capacity').inputValue()).toBe('3');

    // By keyboard: the name, Tab to the capacity, Enter sends the form.
    await name.fill('Clicked server');
    await name.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('server-capacity');
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).pathname).toMatch(/^\/panel\/operations\/op_[0-9a-z]{20}$/);
    expect(await page.locator('h1').textContent()).toBe('Create a server: Clicked server');
    await page.locator('p.notice:has-text("Done."), p.error').first().waitFor({ timeout: OPERATION_SECONDS * 1000 });
    expect(await page.locator('p.error').count(), await page.locator('main').textContent() ?? '').toBe(0);
    const operationId = new URL(page.url()).pathname.split('/').at(-1) as string;

    const operation = (await getJson(server.baseUrl, `/api/operations/${operationId}`, token)).body;
    expect(operation).toMatchObject({ kind: 'create_server', state: 'succeeded' });
    const servers = (await getJson(server.baseUrl, '/api/servers?limit=200', token)).body.data as Record<string, unknown>[];
    expect(servers.filter((row) => row.name === 'Clicked server')).toEqual([
      expect.objectContaining({ id: operation.server_id, capacity: 3, state: 'ready' }),
    ]);

    // The Overview lists it; the trail has the create and the refusal before it, the owner (no token) their actor.
    await clickAndLoad(page, 'a:text-is("Back to the overview")');
    expect(await page.locator('table tr', { hasText: String(operation.server_id) }).textContent()).toContain('Clicked server');
    await server.app.audit.flush();
    const trail = (await getJson(server.baseUrl, '/api/activity?action=create_server', token)).body.data as Record<string, unknown>[];
    const byOwner = { channel: 'panel', token: null, member: expect.objectContaining({ email: 'owner@example.com' }) };
    expect(trail).toEqual([
      expect.objectContaining({ ...byOwner, outcome: 'allowed' }),
      expect.objectContaining({ ...byOwner, outcome: 'denied', code: 'validation_failed' }),
    ]);
  }, 120_000);
});
