// An AI assistant signs in with OAuth against the running server, as a real MCP client does:
// the SDK's auth() discovers the protected resource and authorization server metadata, registers
// (RFC 7591) and authorizes with PKCE S256; an owner narrows the access on the consent page in
// headless Chromium; the code is exchanged; the MCP SDK Client then calls /mcp with the token.
// The token is a team token: listed on the API Tokens page, revocable there, refreshable with
// rotation, bound to the resource it was issued for.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  auth, discoverAuthorizationServerMetadata, exchangeAuthorization, refreshAuthorization, startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateInTimeZone } from '../../src/auth/expiry.js';
import { isWellFormedToken } from '../../src/auth/token-format.js';
import { catalog } from '../../tools/index.js';
import { launchHeadless, signInToPanel } from '../support/browser.js';
import { seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { INITIALIZE, rpc } from '../mcp/clients.js';
import { MemoryOAuthClient, startCallbackServer, type Callback } from '../oauth/support/oauth-client.js';

const PASSWORD = 'oauth-test-password';
const ASSISTANT = 'Claude <Desktop> & co';
const READ_SERVICES_TOOLS = catalog.filter((capability) => capability.permission === null || capability.permission === 'services:read')
  .map((capability) => capability.name).sort();

describe('Assistant sign-in over OAuth, consent in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let callback: Callback;
  let owner: Page;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = server.baseUrl;
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
    browser = await launchHeadless();
    callback = await startCallbackServer();
    owner = await signInToPanel(browser, base, 'owner@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await server?.close();
  });

  /** Starts an assistant's sign-in with the SDK: discovery, registration, PKCE; returns where the browser must go. */
  async function startSignIn(at: string, name = ASSISTANT): Promise<MemoryOAuthClient> {
    const client = new MemoryOAuthClient(callback.url, name);
    expect(await auth(client, { serverUrl: `${at}/mcp` })).toBe('REDIRECT');
    return client;
  }

  /** The whole sign-in: the owner narrows the access on the consent page, the code is exchanged. */
  async function signIn(page: Page, at: string, narrow: (page: Page) => Promise<void> = async () => {}) {
    const client = await startSignIn(at);
    const arrived = callback.next();
    await page.goto(client.authorizationUrl!.href);
    await narrow(page);
    await page.click('button[value=approve]');
    const query = await arrived;
    expect(query.get('error')).toBeNull();
    expect(await auth(client, { serverUrl: `${at}/mcp`, authorizationCode: query.get('code')! })).toBe('AUTHORIZED');
    return client;
  }

  async function connect(at: string, token: string): Promise<Client> {
    const client = new Client({ name: 'oauth-test-assistant', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${at}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }));
    return client;
  }

  const onlyServiceAReadOnly = async (page: Page) => {
    await page.uncheck('input[name=permissions][value="servers:read"]');
    await page.uncheck('input[name=permissions][value="backups:read"]');
    await page.check('input[name=restrict_services]');
    await page.check(`input[name=services][value="${team.serviceIds[0]}"]`);
  };

  let assistant: MemoryOAuthClient;

  it('registers, authorizes with PKCE S256, and shows a consent page naming the assistant and its redirect host', async () => {
    const client = await startSignIn(base);
    const url = client.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${base}/oauth/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${base}/mcp`);
    expect(client.information?.client_id).toBeTruthy();

    await owner.goto(url.href);
    expect(owner.url()).toMatch(new RegExp(`^${base}/panel/oauth/[\\w-]+$`));
    expect((await owner.locator('.assistant-name').textContent())?.trim()).toBe(ASSISTANT);
    expect((await owner.locator('.redirect-target').textContent())?.trim()).toBe(new URL(callback.url).host);
    // Read-only by default, and accepted by the MCP server only (not a choice on this page).
    const checked = await owner.locator('input[name=permissions]:checked').evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
    expect(checked.sort()).toEqual(['backups:read', 'servers:read', 'services:read']);
    expect(await owner.locator('input[name=accepted_by]').count()).toBe(0);
  });

  it('exchanges the code after a narrowed consent; the MCP tools and results follow that consent', async () => {
    const expiresOn = dateInTimeZone(new Date(Date.now() + 30 * 86_400_000), 'UTC');
    assistant = await signIn(owner, base, async (page) => {
      await onlyServiceAReadOnly(page);
      await page.fill('input[name=expires_on]', expiresOn);
    });
    const tokens = assistant.savedTokens!;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    // A team token that works until revoked: no lifetime of its own is announced.
    expect(tokens.expires_in).toBeUndefined();
    // In the format of every team token (tinf_, checksum), so secret scanners find a leaked one.
    expect(isWellFormedToken(tokens.access_token), 'access token').toBe(true);
    expect(isWellFormedToken(tokens.refresh_token!), 'refresh token').toBe(true);

    const mcp = await connect(base, tokens.access_token);
    expect((await mcp.listTools()).tools.map((tool) => tool.name).sort()).toEqual(READ_SERVICES_TOOLS);
    const listed = await mcp.callTool({ name: 'list_erp_services', arguments: {} });
    expect((listed.structuredContent as { data: { id: string }[] }).data.map((service) => service.id)).toEqual([team.serviceIds[0]]);
    // A tool its sign-in lacks the permission for: a step-up challenge (HTTP 403), tested below.
    await expect(mcp.callTool({ name: 'list_servers', arguments: {} })).rejects.toThrow(/403/);
    const self = await mcp.callTool({ name: 'get_current_token', arguments: {} });
    expect(self.structuredContent as object).toMatchObject({
      source: 'assistant', accepted_by: 'mcp', full_access: false, services: [team.serviceIds[0]], expires_on: expiresOn,
    });
    await mcp.close();

    // Accepted by the MCP server only: the REST API refuses it.
    const rest = await fetch(`${base}/api/service-erp`, { headers: { Authorization: `Bearer ${tokens.access_token}`, Accept: 'application/json' } });
    expect(rest.status).toBe(403);
    expect(((await rest.json()) as { code: string }).code).toBe('channel_not_accepted');
  });

  it('lists the token on the API Tokens page with the assistant name, source and narrowed access', async () => {
    await owner.goto(`${base}/panel/developer/api-tokens`);
    const row = owner.locator('tr', { hasText: 'AI assistant sign-in' });
    expect(await row.count()).toBe(1);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain(ASSISTANT);
    expect(text).toContain('MCP server');
    expect(text).toContain('Read ERP services (and their copies)');
    expect(text).toContain('Only ERP services: ERP A');
    expect(text).toContain('owner@example.com');
    expect(text).toContain(`${assistant.savedTokens!.access_token.slice(0, 9)}…${assistant.savedTokens!.access_token.slice(-4)}`);
    expect(await owner.content()).not.toContain(assistant.savedTokens!.access_token);
  });

  it('rotates the access and refresh tokens on refresh, keeps the narrowed access and stays one token', async () => {
    const before = assistant.savedTokens!;
    const metadata = await discoverAuthorizationServerMetadata(base);
    const after = await refreshAuthorization(base, {
      metadata, clientInformation: assistant.information!, refreshToken: before.refresh_token!, resource: new URL(`${base}/mcp`),
    });
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).toBeTruthy();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(isWellFormedToken(after.access_token)).toBe(true);
    expect(isWellFormedToken(after.refresh_token!)).toBe(true);
    assistant.saveTokens(after);

    // The replaced value stops working; the new one has exactly the access the person chose.
    expect((await rpc(base, before.access_token, INITIALIZE)).status).toBe(401);
    const mcp = await connect(base, after.access_token);
    expect((await mcp.listTools()).tools.map((tool) => tool.name).sort()).toEqual(READ_SERVICES_TOOLS);
    const listed = await mcp.callTool({ name: 'list_erp_services', arguments: {} });
    expect((listed.structuredContent as { data: { id: string }[] }).data.map((service) => service.id)).toEqual([team.serviceIds[0]]);
    await mcp.close();
    await owner.goto(`${base}/panel/developer/api-tokens`);
    expect(await owner.locator('tr', { hasText: 'AI assistant sign-in' }).count()).toBe(1);
  });

  it('applies an edit made on the API Tokens page to the token, and keeps it across a refresh', async () => {
    await owner.goto(`${base}/panel/developer/api-tokens`);
    await owner.locator('tr', { hasText: 'AI assistant sign-in' }).locator('text=Edit access').click();
    await owner.check('input[name=permissions][value="servers:read"]');
    await owner.click('button:has-text("Save access")');
    await owner.waitForURL(`${base}/panel/developer/api-tokens`);

    const metadata = await discoverAuthorizationServerMetadata(base);
    const after = await refreshAuthorization(base, {
      metadata, clientInformation: assistant.information!, refreshToken: assistant.savedTokens!.refresh_token!,
    });
    assistant.saveTokens(after);
    const mcp = await connect(base, after.access_token);
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('list_servers');
    expect(names).not.toContain('list_backups');
    await mcp.close();
  });

  it('keeps an open MCP session working when the assistant refreshes its token mid-session', async () => {
    // As an assistant does it: the SDK's transport asks its auth provider for the token on every
    // request, so after a refresh the same session continues with the new value.
    const mcp = new Client({ name: 'oauth-test-assistant', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: assistant });
    await mcp.connect(transport);
    const sessionId = transport.sessionId;
    expect(sessionId).toBeTruthy();
    const toolsBefore = (await mcp.listTools()).tools.map((tool) => tool.name);

    const metadata = await discoverAuthorizationServerMetadata(base);
    assistant.saveTokens(await refreshAuthorization(base, {
      metadata, clientInformation: assistant.information!, refreshToken: assistant.savedTokens!.refresh_token!,
    }));
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(toolsBefore);
    expect(transport.sessionId).toBe(sessionId);
    await mcp.close();
  });

  it('answers 401 with the resource_metadata challenge on the next MCP request once revoked on the API Tokens page, and ends the refresh token', async () => {
    const { access_token: accessToken, refresh_token: refreshToken } = assistant.savedTokens!;
    const mcp = await connect(base, accessToken);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);

    await owner.goto(`${base}/panel/developer/api-tokens`);
    await owner.locator('tr', { hasText: 'AI assistant sign-in' }).locator('text=Revoke').click();
    await owner.click('button:has-text("Revoke token")');
    await owner.waitForURL(`${base}/panel/developer/api-tokens`);
    expect((await owner.locator('tr', { hasText: 'AI assistant sign-in' }).locator('.state').textContent())?.trim()).toBe('revoked');

    await expect(mcp.listTools()).rejects.toThrow(/401/);
    const raw = await rpc(base, accessToken, INITIALIZE);
    expect(raw.status).toBe(401);
    expect(raw.headers['www-authenticate']).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);

    const metadata = await discoverAuthorizationServerMetadata(base);
    await expect(refreshAuthorization(base, { metadata, clientInformation: assistant.information!, refreshToken: refreshToken! }))
      .rejects.toThrow(/invalid_grant|grant/i);
    const left = await server.app.db.kysely.selectFrom('oauth_records').select('kind')
      .where('kind', '=', 'RefreshToken').execute();
    expect(left).toEqual([]);
  });

  it('revokes the sign-in when a rotated refresh token is used again', async () => {
    const client = await signIn(owner, base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const first = client.savedTokens!;
    const second = await refreshAuthorization(base, { metadata, clientInformation: client.information!, refreshToken: first.refresh_token! });
    await expect(refreshAuthorization(base, { metadata, clientInformation: client.information!, refreshToken: first.refresh_token! }))
      .rejects.toThrow();
    expect((await rpc(base, second.access_token, INITIALIZE)).status).toBe(401);
  });

  it('refuses at /mcp a token issued for another resource (the same server under another name)', async () => {
    const elsewhere = base.replace('127.0.0.1', 'localhost');
    const page = await signInToPanel(browser, elsewhere, 'owner@example.com', PASSWORD);
    const client = await signIn(page, elsewhere);
    const token = client.savedTokens!.access_token;
    // Its audience is http://localhost:PORT/mcp: accepted there, refused by http://127.0.0.1:PORT/mcp.
    expect((await rpc(elsewhere, token, INITIALIZE)).status).toBe(200);
    const refused = await rpc(base, token, INITIALIZE);
    expect(refused.status).toBe(401);
    expect(refused.json().code).toBe('invalid_token');
    await page.context().close();
  });

  it('refuses to authorize a resource other than its own MCP endpoint (invalid_target)', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const { authorizationUrl } = await startAuthorization(base, {
      metadata, clientInformation: client.information!, redirectUrl: callback.url, scope: 'mcp', resource: new URL('https://elsewhere.example/mcp'),
    });
    const arrived = callback.next();
    await owner.goto(authorizationUrl.href);
    expect((await arrived).get('error')).toBe('invalid_target');
  });

  it('reads a resource with a trailing slash as its MCP endpoint, at authorization, code exchange and refresh', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const slashed = new URL(`${base}/mcp/`);
    const { authorizationUrl, codeVerifier } = await startAuthorization(base, {
      metadata, clientInformation: client.information!, redirectUrl: callback.url, scope: 'mcp', resource: slashed,
    });
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${base}/mcp/`);
    const arrived = callback.next();
    await owner.goto(authorizationUrl.href);
    await owner.click('button[value=approve]');
    const tokens = await exchangeAuthorization(base, {
      metadata, clientInformation: client.information!, authorizationCode: (await arrived).get('code')!, codeVerifier, redirectUri: callback.url, resource: slashed,
    });
    // Bound to the one MCP resource: /mcp checks the audience on every request.
    expect((await rpc(base, tokens.access_token, INITIALIZE)).status).toBe(200);
    const refreshed = await refreshAuthorization(base, { metadata, clientInformation: client.information!, refreshToken: tokens.refresh_token!, resource: slashed });
    expect((await rpc(base, refreshed.access_token, INITIALIZE)).status).toBe(200);
  });

  it('signs in an assistant that sends no resource at all, for its MCP endpoint', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const { authorizationUrl, codeVerifier } = await startAuthorization(base, {
      metadata, clientInformation: client.information!, redirectUrl: callback.url, scope: 'mcp',
    });
    expect(authorizationUrl.searchParams.has('resource')).toBe(false);
    const arrived = callback.next();
    await owner.goto(authorizationUrl.href);
    await owner.click('button[value=approve]');
    const tokens = await exchangeAuthorization(base, {
      metadata, clientInformation: client.information!, authorizationCode: (await arrived).get('code')!, codeVerifier, redirectUri: callback.url,
    });
    expect((await rpc(base, tokens.access_token, INITIALIZE)).status).toBe(200);
  });

  it('refuses the API resource for an assistant, with or without a trailing slash (invalid_target)', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    for (const resource of [`${base}/api`, `${base}/api/`, `${base}/mcp//`]) {
      const { authorizationUrl } = await startAuthorization(base, {
        metadata, clientInformation: client.information!, redirectUrl: callback.url, scope: 'mcp', resource: new URL(resource),
      });
      const arrived = callback.next();
      await owner.goto(authorizationUrl.href);
      expect((await arrived).get('error'), resource).toBe('invalid_target');
    }
  });

  it('signs in an assistant that asks for no scope at all', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const resource = new URL(`${base}/mcp`);
    const { authorizationUrl, codeVerifier } = await startAuthorization(base, {
      metadata, clientInformation: client.information!, redirectUrl: callback.url, resource,
    });
    expect(authorizationUrl.searchParams.has('scope')).toBe(false);
    const arrived = callback.next();
    await owner.goto(authorizationUrl.href);
    await owner.click('button[value=approve]');
    const code = (await arrived).get('code');
    expect(code).toBeTruthy();
    const tokens = await exchangeAuthorization(base, {
      metadata, clientInformation: client.information!, authorizationCode: code!, codeVerifier, redirectUri: callback.url, resource,
    });
    expect((await rpc(base, tokens.access_token, INITIALIZE)).status).toBe(200);
  });

  it('sends access_denied back to the assistant when the owner declines', async () => {
    const client = await startSignIn(base);
    const arrived = callback.next();
    await owner.goto(client.authorizationUrl!.href);
    await owner.click('button[value=decline]');
    expect((await arrived).get('error')).toBe('access_denied');
  });

  it('sends a browser without a panel session to sign in first, then back to the consent page', async () => {
    const page = await (await browser.newContext()).newPage();
    const client = await startSignIn(base);
    await page.goto(client.authorizationUrl!.href);
    expect(page.url()).toMatch(new RegExp(`^${base}/panel/sign-in\\?next=%2Fpanel%2Foauth%2F`));
    await page.fill('input[name=email]', 'owner@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(new RegExp(`^${base}/panel/oauth/[\\w-]+$`));
    const arrived = callback.next();
    await page.click('button[value=approve]');
    expect((await arrived).get('code')).toBeTruthy();
    await page.context().close();
  });

  it('refuses the consent page to a member, with a sentence saying who can approve', async () => {
    const member = await signInToPanel(browser, base, 'member@example.com', PASSWORD);
    const client = await startSignIn(base);
    const response = await member.goto(client.authorizationUrl!.href);
    expect(response?.status()).toBe(403);
    expect(await member.locator('main').textContent()).toContain('Only owners and admins of Test team can approve a sign-in. You are a member');
    const forged = await member.request.post(member.url(), { form: { decision: 'approve' } });
    expect(forged.status()).toBe(403);
    await member.context().close();
  });

  // Step-up (the MCP authorization specification's scope challenge). Last: each signs in an assistant of its own.
  it('answers a tool call the sign-in lacks the permission for with a 403 step-up challenge naming the scopes it needs', async () => {
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'start_erp_service', arguments: { service_id: team.serviceIds[0] } } };
    const readOnly = await signIn(owner, base);
    const refused = await rpc(base, readOnly.savedTokens!.access_token, call);
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="teaminfra", error="insufficient_scope", ' +
      `error_description="This API token does not have the services:operate scope.", scope="mcp services:operate", ` +
      `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    // The body is our problem document: the same code and sentence as the REST API and an isError result.
    expect(refused.json()).toMatchObject({ code: 'missing_permission', permission: 'services:operate', detail: 'This API token does not have the services:operate scope.' });
    // The same when the call asks for progress (which would otherwise be answered over SSE, status 200 at once).
    const withProgress = await rpc(base, readOnly.savedTokens!.access_token, { ...call, params: { ...call.params, _meta: { progressToken: 1 } } });
    expect(withProgress.status).toBe(403);
    expect(withProgress.headers['www-authenticate']).toContain('error="insufficient_scope"');
    await server.app.audit.flush();
    const audited = await server.app.db.kysely.selectFrom('audit_log').select(['action', 'outcome', 'code'])
      .where('action', '=', 'start_erp_service').execute();
    expect(audited).toEqual(Array(2).fill({ action: 'start_erp_service', outcome: 'denied', code: 'missing_permission' }));
  });

  it('steps up from read-only to services:operate: the consent page offers it ticked, and the new token has it', async () => {
    const readOnly = await signIn(owner, base);
    const before = readOnly.savedTokens!;
    const challenge = (await rpc(base, before.access_token, {
      jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'stop_erp_service', arguments: { service_id: team.serviceIds[0] } },
    })).headers['www-authenticate'] as string;
    const scope = /scope="([^"]+)"/.exec(challenge)![1]!;
    // As the SDK's transport does on a 403 insufficient_scope: authorize again with the challenge's scope.
    // (The client here holds no refresh token, which the SDK 1.x would try first and get the same access back.)
    const stepUp = new MemoryOAuthClient(callback.url, ASSISTANT);
    stepUp.saveClientInformation(readOnly.information!);
    expect(await auth(stepUp, { serverUrl: `${base}/mcp`, scope })).toBe('REDIRECT');
    expect(stepUp.authorizationUrl!.searchParams.get('scope')).toBe('mcp services:operate');

    const arrived = callback.next();
    await owner.goto(stepUp.authorizationUrl!.href);
    expect(await owner.locator('.requested-permissions').textContent()).toContain('Start, stop and redeploy ERP services');
    const checked = await owner.locator('input[name=permissions]:checked').evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
    expect(checked.sort()).toEqual(['backups:read', 'servers:read', 'services:operate', 'services:read']);
    await owner.click('button[value=approve]');
    const query = await arrived;
    expect(await auth(stepUp, { serverUrl: `${base}/mcp`, authorizationCode: query.get('code')! })).toBe('AUTHORIZED');
    // The token response says what was granted (RFC 6749 §5.1).
    expect(stepUp.savedTokens!.scope?.split(' ').sort()).toEqual(['mcp', 'services:operate']);

    const mcp = await connect(base, stepUp.savedTokens!.access_token);
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['start_erp_service', 'stop_erp_service']));
    const self = await mcp.callTool({ name: 'get_current_token', arguments: {} });
    expect((self.structuredContent as { permissions: string[] }).permissions).toEqual(expect.arrayContaining(['services:operate']));
    await mcp.close();
    // The read-only sign-in is untouched: the person revokes it on the API Tokens page if it is no longer wanted.
    expect((await rpc(base, before.access_token, INITIALIZE)).status).toBe(200);
  });

  it('holds the actions ticked under "Needs approval for" on the consent page: the assistant\'s stop waits for approval', async () => {
    const careful = await signIn(owner, base, async (page) => {
      expect(await page.locator('input[name=needs_approval]:checked').count()).toBe(0);
      await page.check('input[name=permissions][value="services:operate"]');
      await page.check('input[name=needs_approval][value=stop_erp_service]');
    });
    const mcp = await connect(base, careful.savedTokens!.access_token);
    const stopped = await mcp.callTool({ name: 'stop_erp_service', arguments: { service_id: team.serviceIds[0] } });
    expect(stopped.structuredContent).toMatchObject({ kind: 'stop', state: 'awaiting_approval', decision_id: expect.stringMatching(/^dec_/) });
    // Only what was ticked waits: a start is queued at once.
    const started = await mcp.callTool({ name: 'start_erp_service', arguments: { service_id: team.serviceIds[1] } });
    expect(started.structuredContent).toMatchObject({ kind: 'start', state: 'queued' });
    const self = (await mcp.callTool({ name: 'get_current_token', arguments: {} })).structuredContent as { id: string };
    await mcp.close();
    await owner.goto(`${base}/panel/developer/api-tokens`);
    expect(await owner.locator(`tr[data-token-id="${self.id}"] .needs-approval`).textContent()).toBe('Needs approval for: Stop an ERP service');

    // Asking again (a step-up, a new sign-in) starts from the approvals its newest token has, so
    // more access does not quietly drop them; the person may still untick them.
    await signIn(owner, base, async (page) => {
      const ticked = await page.locator('input[name=needs_approval]:checked').evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
      expect(ticked).toEqual(['stop_erp_service']);
      await page.uncheck('input[name=needs_approval][value=stop_erp_service]');
    });
  });

  it('grants no permission scope the person unticked, and says so in the token response', async () => {
    const client = await startSignIn(base);
    const metadata = await discoverAuthorizationServerMetadata(base);
    const { authorizationUrl, codeVerifier } = await startAuthorization(base, {
      metadata, clientInformation: client.information!, redirectUrl: callback.url, scope: 'mcp services:write', resource: new URL(`${base}/mcp`),
    });
    const arrived = callback.next();
    await owner.goto(authorizationUrl.href);
    await owner.uncheck('input[name=permissions][value="services:write"]');
    await owner.click('button[value=approve]');
    const tokens = await exchangeAuthorization(base, {
      metadata, clientInformation: client.information!, authorizationCode: (await arrived).get('code')!, codeVerifier,
      redirectUri: callback.url, resource: new URL(`${base}/mcp`),
    });
    expect(tokens.scope).toBe('mcp');
    const refused = await rpc(base, tokens.access_token, {
      jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_erp_service', arguments: {} },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toContain('scope="mcp services:write"');
  });
});
