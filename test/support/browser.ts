// Headless Chromium (Debian's package, driven by playwright-core) for the panel's tests.
// Only suites named *.browser.test.ts may call launchHeadless: vitest.config.ts skips those
// where Chromium is missing (unless TEAMINFRA_REQUIRE_BROWSER=1, as in CI).
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { chromiumInstalled, chromiumPath } from './chromium.js';

export async function launchHeadless(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!chromiumInstalled()) {
    throw new Error(`Chromium not found at ${executablePath}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH).`);
  }
  // Playwright gives each browser a fresh temporary profile; the flags keep Chromium off the
  // network, which is closed on these machines.
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** Signs in to the panel in a fresh browser context and waits for the overview. */
export async function signInToPanel(browser: Browser, baseUrl: string, email: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  await page.goto(`${baseUrl}/panel/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${baseUrl}/panel`);
  return page;
}

/** Clicks a link or form button and waits for the page it leads to, so the next step reads that page. */
export async function clickAndLoad(page: Page, target: string | Locator): Promise<void> {
  await Promise.all([page.waitForEvent('load'), typeof target === 'string' ? page.click(target) : target.click()]);
}
