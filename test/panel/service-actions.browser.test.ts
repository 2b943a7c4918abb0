// An owner runs a service from the panel by clicking, in headless Chromium, against the real
// server with the engine (the local driver of `npm start`) and the mail catcher running: New
// service, Start, its address opened, Back up now, Download, Restore, Make a copy, the copy's
// password-reset email read in its Caught emails, and Delete of the copy. Each step's result is
// checked through the REST API, and each operation is followed to its end on its page by the
// page's script; with scripts off, the page follows it by reloading itself.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { getJson, makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';

const PASSWORD = 'service-actions-browser-password';
const OPERATION_SECONDS = 60;

describe('the service page\'s actions in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({
      engine: { pollMs: 100, reconcileIntervalMs: 0 }, mail: { host: '127.0.0.1', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 },
    }, {}, { engine: true });
    await server.app.mailCatcher.start();
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    token = (await makeToken(server.app, team.teamId)).value;
    browser = await launchHeadless();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    const dataDir = server?.dataDir;
    await server?.close();
    if (dataDir) expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  const api = async (path: string) => {
    const answer = await getJson(server.baseUrl, path, token);
    return { status: answer.status, body: answer.body as Record<string, unknown> & { data: Record<string, unknown>[] } };
  };

  /** Clicks a button of the page, lands on the operation's page, and waits there until the page says it ended. */
  async function runAndFollow(page: Page, button: string): Promise<string> {
    await clickAndLoad(page, `button:text-is("${button}")`);
    expect(new URL(page.url()).pathname).toMatch(/^\/panel\/operations\/op_[0-9a-z]{20}$/);
    await page.locator('p.notice:has-text("Done."), p.error').first().waitFor({ timeout: OPERATION_SECONDS * 1000 });
    expect(await page.locator('p.error').count(), await page.locator('main').textContent() ?? '').toBe(0);
    return new URL(page.url()).pathname.split('/').at(-1) as string;
  }

  it('lets an owner create, start, open, back up, download, restore, copy, read the copy\'s mail and delete the copy, by clicking', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);

    // New service: the operation page follows the create; the API then lists it, stopped.
    await clickAndLoad(page, 'button:text-is("New service")');
    await page.fill('#service-name', 'Clicked ERP');
    await page.selectOption('#service-server', team.serverIds[1]);
    await runAndFollow(page, 'Create service');
    const created = (await api('/api/service-erp?limit=200')).body.data.find((service) => service.name === 'Clicked ERP');
    expect(created).toMatchObject({ state: 'stopped', server_id: team.serverIds[1] });
    const serviceId = created?.id as string;

    // Start, then the address on the service page is the API's url, and opening it reaches the service.
    await clickAndLoad(page, 'a:text-is("Open Clicked ERP")');
    await runAndFollow(page, 'Start');
    const started = (await api(`/api/service-erp/${serviceId}`)).body;
    expect(started.state).toBe('running');
    await clickAndLoad(page, 'a:text-is("Open Clicked ERP")');
    const address = page.locator('[data-live="address"] a');
    expect(await address.getAttribute('href')).toBe(started.url);
    const [opened] = await Promise.all([page.waitForEvent('popup'), address.click()]);
    await opened.waitForLoadState();
    expect(await opened.locator('body').textContent()).toContain('Clicked ERP');
    await opened.close();

    // Back up now, then the backups list has it; Download gives the very file the API describes.
    await runAndFollow(page, 'Back up now');
    await clickAndLoad(page, 'a:text-is("Backups of Clicked ERP")');
    const backups = (await api(`/api/service-erp/${serviceId}/backups`)).body.data;
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatchObject({ state: 'completed', kind: 'manual' });
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(`[data-backup-id="${String(backups[0]?.id)}"] button:text-is("Download")`).click()]);
    const saved = readFileSync(await download.path());
    expect(createHash('sha256').update(saved).digest('hex')).toBe(backups[0]?.sha256);
    expect(await page.locator('text=A safety backup of the data it replaces is taken first').count()).toBe(1);

    // Restore: the API then shows the safety backup it took first.
    const restore = await runAndFollow(page, 'Restore');
    const restored = (await api(`/api/operations/${restore}`)).body;
    expect(restored).toMatchObject({ kind: 'restore', state: 'succeeded' });
    const safety = (restored.result as { safety_backup_id: string }).safety_backup_id;
    expect(await page.locator('main').textContent()).toContain(safety);
    expect((await api(`/api/backups/${safety}`)).body).toMatchObject({ kind: 'safety', state: 'completed' });

    // Make a copy, start it, ask it for a password reset: its Caught emails hold the email.
    await clickAndLoad(page, 'a:text-is("Open Clicked ERP")');
    await page.fill('#copy-name', 'Clicked copy');
    await runAndFollow(page, 'Make a copy');
    const copy = (await api(`/api/service-erp/${serviceId}/copies`)).body.data[0];
    expect(copy).toMatchObject({ name: 'Clicked copy', state: 'stopped' });
    await clickAndLoad(page, 'a:text-is("Open Clicked copy")');
    await runAndFollow(page, 'Start');
    await clickAndLoad(page, 'a:text-is("Open Clicked copy")');
    const copyAddress = await page.locator('[data-live="address"] a').getAttribute('href');
    expect(copyAddress).toBe((await api(`/api/service-erp/${String(copy?.id)}`)).body.url);
    const erp = await page.context().newPage();
    await erp.goto(`${copyAddress}web/reset_password`);
    await erp.fill('input[name=login]', 'admin');
    await clickAndLoad(erp, 'button[type=submit]');
    expect(await erp.locator('body').textContent()).toContain('Check your email');
    await erp.close();
    await clickAndLoad(page, 'a:text-is("Caught emails")');
    const caught = (await api(`/api/service-erp/${String(copy?.id)}/emails`)).body.data;
    expect(caught).toHaveLength(1);
    await clickAndLoad(page, `a:text-is("${String(caught[0]?.subject)}")`);
    const text = await page.locator('pre.email-text').textContent();
    expect(text).toMatch(new RegExp(`${copyAddress}web/reset_password\\?token=\\S+`));
    const [eml] = await Promise.all([page.waitForEvent('download'), page.click('button:text-is("Download .eml")')]);
    expect(readFileSync(await eml.path(), 'utf8')).toContain(`Subject: ${String(caught[0]?.subject)}`);

    // Delete the copy, its name typed: the API no longer has it.
    await clickAndLoad(page, 'a:text-is("← Caught emails of Clicked copy")');
    await clickAndLoad(page, 'a:text-is("← Clicked copy")');
    await page.fill('#confirm-name', 'Clicked copy');
    await runAndFollow(page, 'Delete');
    expect((await api(`/api/service-erp/${String(copy?.id)}`)).status).toBe(404);

    // Every step is in the activity trail, with the owner (a member, no token) as its actor.
    await server.app.audit.flush();
    const trail = (await api('/api/activity?limit=200')).body.data.filter((entry) => (entry.member as { email?: string } | null)?.email === 'owner@example.com');
    expect(trail.every((entry) => entry.channel === 'panel' && entry.token === null && entry.outcome === 'allowed')).toBe(true);
    expect(new Set(trail.map((entry) => entry.action))).toEqual(new Set(['sign_in', 'create_erp_service', 'start_erp_service', 'create_backup',
      'download_backup', 'restore_backup', 'create_copy', 'get_caught_email', 'download_caught_email', 'delete_erp_service']));
  }, 240_000);

  it('follows an operation to its end with scripts off, the page reloading itself', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/panel/sign-in`);
    await page.fill('input[name=email]', 'owner@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await clickAndLoad(page, 'button[type=submit]');
    await page.goto(`${server.baseUrl}/panel/services/${team.serviceIds[0]}`);
    await clickAndLoad(page, 'button:text-is("Start")');
    const operationPage = page.url();
    expect(await page.locator('[data-live="state"]').textContent()).toMatch(/^(queued|running)$/);
    await page.locator('p.notice:has-text("Done.")').waitFor({ timeout: OPERATION_SECONDS * 1000 });
    expect(page.url()).toBe(operationPage);
    expect((await api(`/api/service-erp/${team.serviceIds[0]}`)).body).toMatchObject({ state: 'running' });
    await context.close();
  }, 120_000);
});
