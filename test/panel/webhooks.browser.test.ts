// Developer > Webhooks in headless Chromium: create (secret shown once), send a test event and
// see it in the delivery log, rotate the secret (both signatures for a day), disable.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/password.js';
import { upsertMember } from '../../src/db/repositories/teams.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const PASSWORD = 'webhooks-test-password';


describe('Developer > Webhooks in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      webhooks: { allowHttp: true, allowPrivate: true, retryDelaysMs: [50], timeoutMs: 5000, pollMs: 50, disableAfterMs: 86_400_000, excerptBytes: 1024 },
    });
    server.app.webhooks.start();
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    browser = await launchHeadless();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
  });

  it('creates a webhook, sends a test event, rotates the secret and disables it', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await clickAndLoad(page, 'text=Webhooks');
    await clickAndLoad(page, 'text=Create a webhook');
    await page.fill('input[name=url]', receiver.url);
    await page.fill('input[name=description]', 'Ops <receiver>');
    await clickAndLoad(page, 'button:has-text("Create webhook")');
    const secret = await page.inputValue('#webhook-secret');
    expect(secret).toMatch(/^whsec_/);

    await clickAndLoad(page, 'text=Open the webhook');
    const hookUrl = page.url();
    expect(await page.content()).not.toContain(secret);
    await clickAndLoad(page, 'button:has-text("Send test event")');
    const [delivery] = await receiver.waitFor(1);
    expect(verifyWebhook(secret, delivery!.headers as Record<string, string>, delivery!.body)).toMatchObject({ type: 'webhook.test' });
    // The delivery log shows the attempt once the worker recorded it.
    let row = '';
    for (let attempt = 0; attempt < 50 && !row.includes('delivered'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await page.goto(hookUrl);
      row = (await page.locator('tr[data-delivery-id]').first().textContent()) ?? '';
    }
    expect(row).toContain('webhook.test');
    expect(row).toContain('delivered');
    expect(row).toContain('200');

    await clickAndLoad(page, 'button:has-text("Rotate signing secret")');
    const rotated = await page.inputValue('#webhook-secret');
    expect(rotated).not.toBe(secret);
    await clickAndLoad(page, 'text=Open the webhook');
    expect(await page.locator('main').textContent()).toContain('The previous secret also signs deliveries until');
    await clickAndLoad(page, 'button:has-text("Send test event")');
    const second = (await receiver.waitFor(2))[1]!;
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(secret, second.headers as Record<string, string>, second.body)).toBeTruthy();
    expect(verifyWebhook(rotated, second.headers as Record<string, string>, second.body)).toBeTruthy();

    await clickAndLoad(page, 'button:has-text("Disable")');
    expect(await page.locator('main').textContent()).toContain('Disabled. Disabled by a team member.');
    await page.goto(`${server.baseUrl}/panel/developer/webhooks`);
    expect(await page.locator('tbody').textContent()).toContain('Ops <receiver>');
    expect(await page.locator('tbody .state').first().textContent()).toBe('disabled');
    await page.context().close();
  });

  it('refuses a loopback URL when the operator has not allowed private addresses', async () => {
    const strict = await startTestServer();
    try {
      await upsertMember(strict.app.db.kysely, { teamId: (await seedTeam(strict.app)).teamId, email: 'o@example.com', role: 'owner', passwordHash: await hashPassword(PASSWORD) });
      const page = await signInToPanel(browser, strict.baseUrl, 'o@example.com', PASSWORD);
      await page.goto(`${strict.baseUrl}/panel/developer/webhooks/new`);
      await page.fill('input[name=url]', 'https://127.0.0.1/hook');
      await clickAndLoad(page, 'button:has-text("Create webhook")');
      expect(await page.locator('.error').textContent()).toContain('private, loopback or link-local address');
      await page.context().close();
    } finally {
      await strict.close();
    }
  });
});
