// npm run screenshots: the screenshots of docs/panel.md, made again against the demo of
// `npm start` (a fresh data directory, ports picked by the system), in headless Chromium
// (Debian's /usr/bin/chromium, or CHROMIUM_PATH), by clicking as a person would: the owner starts
// the demo's Production ERP and backs it up, then the service page, its backups and the staging
// copy's caught password-reset email are taken. The demo's services are stopped through the API
// before the server stops (they would outlive it: serve leaves services running for the next
// start), and the data directory is removed. Every wait has a deadline.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const imagesDir = join(root, 'docs', 'images');
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const START_SECONDS = 120;
const OPERATION_SECONDS = 60;
const STOP_SECONDS = 60;

if (!existsSync(chromiumPath)) {
  console.error(`screenshots: Chromium not found at ${chromiumPath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  process.exit(1);
}

const dataDir = mkdtempSync(join(tmpdir(), 'teaminfra-screenshots-'));
const server = spawn(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), 'serve', '--demo', '--data-dir', dataDir, '--port', '0'], {
  env: { ...process.env, TEAMINFRA_SMTP_PORT: '0', TEAMINFRA_LOG_FORMAT: 'json', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});

/** The demo's banner: the address, the owner's sign-in and the API token. */
function banner() {
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => reject(new Error(`the demo did not start within ${START_SECONDS} s`)), START_SECONDS * 1000);
    server.once('exit', (code) => reject(new Error(`the demo stopped at start (exit code ${code})`)));
    server.stdout.on('data', (chunk) => {
      printed += chunk;
      const address = /teaminfra serving on (\S+)/.exec(printed)?.[1];
      const signIn = /owner sign-in: (\S+) \/ (\S+)/.exec(printed);
      const token = /API token: +(\S+)/.exec(printed)?.[1];
      if (address && signIn && token && printed.includes('Try:')) {
        clearTimeout(timer);
        resolve({ address, email: signIn[1], password: signIn[2], token });
      }
    });
  });
}

async function api(demo, method, path) {
  const response = await fetch(demo.address + path, { method, headers: { authorization: `Bearer ${demo.token}`, accept: 'application/json' } });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}`);
  return response.json();
}

/** Stops every running service of the demo through the API, each stop followed to its end. */
async function stopServices(demo) {
  const { data } = await api(demo, 'GET', '/api/service-erp?limit=200');
  const copies = await Promise.all(data.map((service) => api(demo, 'GET', `/api/service-erp/${service.id}/copies`)));
  const running = [...data, ...copies.flatMap((page) => page.data)].filter((service) => service.state === 'running');
  for (const service of running) {
    const operation = await api(demo, 'POST', `/api/service-erp/${service.id}/stop`);
    const deadline = Date.now() + STOP_SECONDS * 1000;
    while ((await api(demo, 'GET', `/api/operations/${operation.id}`)).state !== 'succeeded') {
      if (Date.now() > deadline) throw new Error(`stopping ${service.name} took longer than ${STOP_SECONDS} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Clicks a button or link and waits for the page it leads to. */
async function clickAndLoad(page, selector) {
  await Promise.all([page.waitForEvent('load'), page.click(selector)]);
}

/** Clicks an action's button and waits on its operation's page until it says the operation ended well. */
async function runAndFollow(page, button) {
  await clickAndLoad(page, `button:text-is("${button}")`);
  await page.locator('p.notice:has-text("Done."), p.error').first().waitFor({ timeout: OPERATION_SECONDS * 1000 });
  if (await page.locator('p.error').count() > 0) throw new Error(`${button}: ${await page.locator('p.error').first().textContent()}`);
}

async function takeScreenshots(demo) {
  mkdirSync(imagesDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${demo.address}/panel/sign-in`);
    await page.fill('input[name=email]', demo.email);
    await page.fill('input[name=password]', demo.password);
    await clickAndLoad(page, 'button[type=submit]');

    await clickAndLoad(page, 'a:text-is("Production ERP")');
    await runAndFollow(page, 'Start');
    await clickAndLoad(page, 'a:text-is("Open Production ERP")');
    await runAndFollow(page, 'Back up now');
    await clickAndLoad(page, 'a:text-is("Open Production ERP")');
    await page.locator('[data-live="address"] a').waitFor();
    await page.screenshot({ path: join(imagesDir, 'panel-service-page.png'), fullPage: true });

    await clickAndLoad(page, 'a:text-is("Backups")');
    await page.screenshot({ path: join(imagesDir, 'panel-backups.png'), fullPage: true });

    await clickAndLoad(page, 'a:text-is("← Production ERP")');
    await clickAndLoad(page, 'a:text-is("Caught emails")');
    await clickAndLoad(page, 'td a');
    await page.frameLocator('iframe.email-html').locator('body').waitFor().catch(() => undefined);
    await page.screenshot({ path: join(imagesDir, 'panel-caught-email.png'), fullPage: true });
  } finally {
    await browser.close();
  }
}

/** Pids of processes whose command line names the data directory: the demo's services, if any outlived it. */
function processesOfDataDir() {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir);
    } catch {
      return false;
    }
  }).map(Number);
}

let failed;
try {
  const demo = await banner();
  try {
    await takeScreenshots(demo);
  } finally {
    await stopServices(demo);
  }
  console.log(`screenshots: written to ${imagesDir}`);
} catch (error) {
  failed = error;
} finally {
  const exited = new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once('exit', resolve)));
  server.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, STOP_SECONDS * 1000))]);
  if (server.exitCode === null) server.kill('SIGKILL');
  // Only what this run started: a process that names its own temporary data directory.
  for (const pid of processesOfDataDir()) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}
if (failed) {
  console.error(`screenshots: ${failed.message}`);
  process.exit(1);
}
