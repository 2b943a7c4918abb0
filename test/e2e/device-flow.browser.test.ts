// The command line signs in with the device flow, end to end: `teaminfra login` runs as a real
// child process against the running server, an owner approves its code in headless Chromium,
// and the command line then starts an ERP service over the REST API with the token it received,
// showing a progress line while the engine runs the operation. The same token is refused by
// /mcp, and `teaminfra logout` revokes it.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashTokenValue, isWellFormedToken } from '../../src/auth/token-format.js';
import { launchHeadless, signInToPanel } from '../support/browser.js';
import { runCli } from '../support/cli.js';
import { getJson, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';
import { INITIALIZE, rpc } from '../mcp/clients.js';
import { startCli } from '../oauth/support/cli-process.js';

const PASSWORD = 'device-test-password';

describe('teaminfra login (device flow) and services start against the running server', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let owner: Page;
  let configHome: string;
  let env: NodeJS.ProcessEnv;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 200 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    browser = await launchHeadless();
    owner = await signInToPanel(browser, server.baseUrl, 'owner@example.com', PASSWORD);
    configHome = mkdtempSync(join(tmpdir(), 'teaminfra-config-'));
    // No token from the environment: the commands must use what login stored.
    env = { XDG_CONFIG_HOME: configHome, TEAMINFRA_TOKEN: '', TEAMINFRA_URL: '' };
  });
  afterAll(async () => {
    await browser?.close();
    const dataDir = server?.dataDir;
    await server?.close();
    if (dataDir) expect(await killProcessesMatching(dataDir)).toBe(0);
    rmSync(configHome, { recursive: true, force: true });
  });

  /** Types the code at the verification address and continues to the panel's approval page. */
  async function enterCode(verificationUri: string, userCode: string): Promise<void> {
    await owner.goto(verificationUri);
    await owner.fill('input[name=user_code]', userCode);
    await owner.click('button:has-text("Continue")');
    expect(await owner.locator('.user-code').textContent()).toBe(userCode);
    await owner.click('button:has-text("Continue")');
    await owner.waitForURL(new RegExp(`^${server.baseUrl}/panel/oauth/[\\w-]+$`));
  }

  it('prints an address and a code, waits with a progress line, and stores the approved token with mode 0600', async () => {
    const login = startCli(['login', '--url', server.baseUrl], env);
    const [, verificationUri, userCode] = await login.waitFor(/open this address[^\n]*\n\s+(\S+)\nand enter the code: ([A-Z]{4}-[A-Z]{4})/);
    expect(verificationUri).toBe(`${server.baseUrl}/oauth/device`);
    await login.waitFor(/Waiting for approval in the panel\.\.\./);

    await enterCode(verificationUri!, userCode!);
    const main = (await owner.locator('main').textContent()) ?? '';
    expect(main).toContain('teaminfra command line');
    expect(main).toContain('full access');
    expect(await owner.locator('.user-code').textContent()).toBe(userCode);
    await owner.click('button[value=approve]');
    expect((await owner.locator('h1').textContent())?.trim()).toBe('Command line signed in');

    expect(await login.exited()).toBe(0);
    expect(login.stdout()).toContain(`Signed in to Test team at ${server.baseUrl}.`);

    const file = join(configHome, 'teaminfra', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(readFileSync(file, 'utf8'));
    expect(credentials).toMatchObject({ url: server.baseUrl, team: { id: team.teamId, name: 'Test team' } });
    token = credentials.token;
    // The format of every team token, so secret scanners find it in a leaked file.
    expect(isWellFormedToken(token)).toBe(true);

    const self = await getJson(server.baseUrl, '/api/token', token);
    expect(self.body).toMatchObject({ source: 'cli', accepted_by: 'api', full_access: true, expires_on: null });
    // Stored as its SHA-256 only, in the token table and in the OAuth records alike.
    const row = await server.app.db.kysely.selectFrom('api_tokens').select(['id', 'token_hash']).where('id', '=', credentials.token_id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashTokenValue(token));
    const records = await server.app.db.kysely.selectFrom('oauth_records').selectAll().execute();
    expect(JSON.stringify(records)).not.toContain(token);
  });

  it('lists the token on the API Tokens page as a command-line sign-in with full access through the REST API', async () => {
    await owner.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    const row = owner.locator('tr', { hasText: 'Command-line sign-in' });
    expect(await row.count()).toBe(1);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('REST API and command line');
    expect(text).toContain('Full access');
    expect(text).toContain('owner@example.com');
  });

  it('refuses the command-line token at /mcp: it is not accepted by the MCP server', async () => {
    const response = await rpc(server.baseUrl, token, INITIALIZE);
    expect(response.status).toBe(403);
    expect(response.json().code).toBe('channel_not_accepted');
  });

  it('lists ERP services with the stored token', async () => {
    const listed = await runCli(['services', 'list'], { env });
    expect(listed.code).toBe(0);
    for (const id of team.serviceIds) expect(listed.stdout).toContain(id);
    expect(listed.stdout).toMatch(/ERP A\s+stopped/);
  });

  it('starts an ERP service, printing a progress line until the operation succeeded', async () => {
    const [serviceId] = team.serviceIds;
    const started = await runCli(['services', 'start', serviceId], { env });
    expect(started.stderr).toMatch(new RegExp(`Starting ${serviceId}: (queued|running) \\(\\d+s, operation op_\\w+\\)`));
    expect(started.stderr).toMatch(new RegExp(`Starting ${serviceId}: succeeded`));
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(new RegExp(`Started ${serviceId} \\(operation op_\\w+ succeeded\\)\\.`));
    expect((await getJson(server.baseUrl, `/api/service-erp/${serviceId}`, token)).body.state).toBe('running');
  });

  it('answers --no-wait at once with the queued operation, and a failure with the server sentence and exit 1', async () => {
    const [, serviceB] = team.serviceIds;
    const queued = await runCli(['services', 'start', serviceB, '--no-wait', '--json'], { env });
    expect(queued.code).toBe(0);
    expect(JSON.parse(queued.stdout)).toMatchObject({ kind: 'start', service_id: serviceB });
    const unknown = await runCli(['services', 'start', 'svc_00000000000000000000'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^teaminfra: .+/);
  });

  /** A whole `teaminfra login`, approved in the browser. */
  async function login(): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
    const cli = startCli(['login', '--url', server.baseUrl], env);
    const [, verificationUri, userCode] = await cli.waitFor(/\n\s+(\S+)\nand enter the code: ([A-Z]{4}-[A-Z]{4})/);
    await enterCode(verificationUri!, userCode!);
    await owner.click('button[value=approve]');
    return { exitCode: await cli.exited(), stdout: cli.stdout(), stderr: cli.stderr() };
  }

  it('revokes the token of the previous sign-in when logging in again', async () => {
    const again = await login();
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain(`The token of the previous sign-in (${server.baseUrl}) is revoked.`);
    expect((await getJson(server.baseUrl, '/api/token', token)).status).toBe(401);
    const replaced = token;
    token = JSON.parse(readFileSync(join(configHome, 'teaminfra', 'credentials.json'), 'utf8')).token;
    expect(token).not.toBe(replaced);
    expect((await getJson(server.baseUrl, '/api/token', token)).status).toBe(200);
  });

  it('leaves the token working when another client asks the OAuth server to revoke it', async () => {
    const registered = await fetch(`${server.baseUrl}/oauth/register`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Another assistant', redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none' }),
    });
    expect(registered.status).toBe(201);
    const { client_id: otherClient } = await registered.json() as { client_id: string };
    const revoked = await fetch(`${server.baseUrl}/oauth/revoke`, {
      method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: otherClient }),
    });
    // RFC 7009: the answer is the same as for a revoked token; the token itself is left alone.
    expect(revoked.status).toBe(200);
    expect((await getJson(server.baseUrl, '/api/token', token)).status).toBe(200);
  });

  it('revokes the token through the OAuth server on logout and deletes the credentials file', async () => {
    const logout = await runCli(['logout'], { env });
    expect(logout.code).toBe(0);
    expect(logout.stdout).toContain('the token is revoked');
    expect(() => statSync(join(configHome, 'teaminfra', 'credentials.json'))).toThrow();
    expect((await getJson(server.baseUrl, '/api/token', token)).status).toBe(401);
    const listed = await runCli(['services', 'list'], { env });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('Not signed in');
  });

  it('exits with a sentence when the owner declines the code', async () => {
    const login = startCli(['login', '--url', server.baseUrl], env);
    const [, verificationUri, userCode] = await login.waitFor(/\n\s+(\S+)\nand enter the code: ([A-Z]{4}-[A-Z]{4})/);
    await enterCode(verificationUri!, userCode!);
    await owner.click('button[value=decline]');
    expect(await login.exited()).toBe(1);
    expect(login.stderr()).toContain('The sign-in was declined in the panel.');
  });
});
