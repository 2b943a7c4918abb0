// A copy's caught email written to attack whoever reads it, read in the panel in headless
// Chromium: its subject, text and HTML hold scripts, event handlers, javascript: links, remote
// images, style sheets and frames, a refresh and a form. Nothing of it runs, nothing is fetched
// (a real server stands at the "remote" address and counts what reaches it; every request the
// browser names for another origin, even after the email's links and button are clicked, is one
// its policy stopped before it was sent), and its text is shown as text. The email arrives the way a copy's does: over SMTP, through the mail catcher.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueMailCredentials } from '../../src/mail/mail-credentials.js';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';

const PASSWORD = 'caught-emails-browser-password';
const SUBJECT = '<script>window.pwned = "subject"</script><img src=x onerror="window.pwned = 1">Reset';

function hostileHtml(remote: string): string {
  return `<html><head><meta http-equiv="refresh" content="0;url=${remote}/refresh">
<link rel="stylesheet" href="${remote}/style.css"><link rel="prefetch" href="${remote}/prefetch">
<style>@import url(${remote}/import.css); body { background: url(${remote}/background.png) }</style>
<base href="${remote}/"></head>
<body onload="parent.pwned = 'onload'">
<script>parent.pwned = 'script'; parent.document.title = 'pwned'; fetch('${remote}/script');</script>
<p id="body-text">Hostile body text</p>
<img src="${remote}/pixel.png"><img src="relative.png"><img src="x" onerror="parent.pwned = 'onerror'">
<a id="javascript" href="javascript:parent.pwned = 'link'">a javascript: link</a>
<a id="remote" href="${remote}/click">a remote link</a>
<a id="self" target="_self" href="${remote}/self">a link for the frame itself</a>
<a id="top" target="_top" href="${remote}/top">a link for the whole page</a>
<form action="${remote}/form" method="post"><input name="q" value="x"><button id="submit" type="submit">Send</button></form>
<iframe src="${remote}/frame"></iframe><video poster="${remote}/poster.png"></video><object data="${remote}/object"></object>
<svg><image href="${remote}/svg.png"/></svg>
</body></html>`;
}

describe('a caught email in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let remote: Server;
  let remoteBase: string;
  const reachedRemote: string[] = [];
  beforeAll(async () => {
    remote = createServer((request, response) => {
      reachedRemote.push(request.url ?? '');
      response.end('remote');
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    remoteBase = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
    server = await startTestServer({ mail: { host: '127.0.0.1', port: 0, maxMessageBytes: 1_000_000, maxEmailsPerCopy: 50 } });
    await server.app.mailCatcher.start();
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    const login = await issueMailCredentials(server.app.db.kysely, team.copyId);
    const transport = nodemailer.createTransport({
      host: '127.0.0.1', port: server.app.mailCatcher.port, secure: false, ignoreTLS: true, auth: { user: login.username, pass: login.password },
    });
    await transport.sendMail({
      from: 'erp@copy.example', to: 'admin@example.com', subject: SUBJECT,
      text: `Open javascript:alert(1) or <script>window.pwned = "text"</script> ${remoteBase}/in-text`, html: hostileHtml(remoteBase),
    });
    browser = await launchHeadless();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => remote?.close(resolve));
  });

  it('runs nothing and fetches nothing of a hostile email, even clicked, and shows its text as text', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    const own = new URL(server.baseUrl).origin;
    // Every request the page and its frames asked of another origin, and every answer from one.
    const asked: Request[] = [];
    const answered: string[] = [];
    page.context().on('request', (request) => { if (new URL(request.url()).origin !== own) asked.push(request); });
    page.context().on('response', (response) => { if (new URL(response.url()).origin !== own) answered.push(response.url()); });
    await page.goto(`${server.baseUrl}/panel/services/${team.copyId}`);
    await clickAndLoad(page, 'a:text-is("Caught emails")');
    await clickAndLoad(page, 'td a');
    const frame = page.frameLocator('iframe.email-html');
    await frame.locator('#body-text').waitFor();

    expect(await page.locator('h1').textContent()).toBe(SUBJECT);
    expect(await page.locator('pre.email-text').textContent()).toContain('<script>window.pwned = "text"</script>');
    expect(await page.locator('iframe.email-html').getAttribute('sandbox')).toBe('');
    for (const target of ['#javascript', '#remote', '#top', '#submit']) await frame.locator(target).click({ timeout: 5000 });
    // Time for anything the clicks or the refresh would have started.
    await page.waitForTimeout(1000);
    expect(await frame.locator('#body-text').textContent()).toBe('Hostile body text');
    // A link aimed at the frame itself leads it away, to the browser's error: no request leaves for it.
    await frame.locator('#self').click({ timeout: 5000 });
    await page.waitForTimeout(1000);

    expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
    expect(await page.title()).not.toBe('pwned');
    expect(new URL(page.url()).pathname).toMatch(/^\/panel\/emails\/eml_[0-9a-z]{20}$/);
    // The browser names each of them, and stops each before it is sent: its policy refuses it.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.map((request) => [request.url(), request.failure()?.errorText]).filter(([, failure]) => failure !== 'csp')).toEqual([]);
    expect(answered).toEqual([]);
    expect(reachedRemote).toEqual([]);
  }, 60_000);

  it('answers the HTML part on its own with a policy that runs and fetches nothing, and frames it only from the panel', async () => {
    const page = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    await page.goto(`${server.baseUrl}/panel/services/${team.copyId}/emails`);
    const href = await page.locator('td a').getAttribute('href');
    const answer = await page.request.get(`${server.baseUrl}${href}/html`);
    expect(answer.headers()['content-security-policy']).toMatch(/^sandbox; default-src 'none';/);
    expect(answer.headers()['x-frame-options']).toBe('SAMEORIGIN');
    const opened = await page.goto(`${server.baseUrl}${href}/html`);
    expect(opened?.status()).toBe(200);
    await page.waitForTimeout(1000);
    expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
    expect(reachedRemote).toEqual([]);
  });
});
