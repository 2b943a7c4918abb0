// An assistant signs in with a Client ID Metadata Document instead of registering: its client_id
// is the https URL of a JSON document describing it, which the sign-in server fetches. The
// document is served over https on loopback with a certificate from a CA made for this run; the
// server trusts that CA, and reaches loopback, only because this test configures it so.
// The SDK's own auth() does the client's side; an owner approves in headless Chromium.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_METADATA_CONFIG } from '../../src/oauth/client-metadata-fetcher.js';
import { launchHeadless, signInToPanel } from '../support/browser.js';
import { seedMembers, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';
import { makeTestCertificates } from '../support/test-ca.js';
import { MemoryOAuthClient, startCallbackServer, type Callback } from '../oauth/support/oauth-client.js';
import { startMetadataHost, type MetadataHost } from '../oauth/support/metadata-host.js';

const PASSWORD = 'cimd-test-password';
const ASSISTANT = 'Documented Assistant';

describe('Assistant sign-in with a Client ID Metadata Document', () => {
  let server: TestServer;
  let host: MetadataHost;
  let browser: Browser;
  let callback: Callback;
  let owner: Page;
  let base: string;

  /** Publishes a document at `path` naming itself (or `clientId`) and returning to the test's callback. */
  const publishDocument = (path: string, fields: Record<string, unknown> = {}) => host.publish(path, {
    document: {
      client_id: host.urlOf(path), client_name: ASSISTANT, redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...fields,
    },
  });

  beforeAll(async () => {
    const certificates = makeTestCertificates();
    host = await startMetadataHost(certificates);
    server = await startTestServer({
      clientMetadata: { ...DEFAULT_CLIENT_METADATA_CONFIG, allowPrivate: true, trustedCaPem: certificates.caPem },
    });
    base = server.baseUrl;
    const team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner']);
    browser = await launchHeadless();
    callback = await startCallbackServer();
    owner = await signInToPanel(browser, base, 'owner@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await server?.close();
    await host?.close();
  });

  it('says in the authorization server metadata that metadata documents are supported', async () => {
    const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.registration_endpoint).toBe(`${base}/oauth/register`);
  });

  it('signs in with the document URL as client_id, without registering, and the browser comes back with iss', async () => {
    const documentUrl = publishDocument('/assistant/client.json');
    const client = new MemoryOAuthClient(callback.url, 'a name the document overrides', documentUrl);
    expect(await auth(client, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
    expect(client.authorizationUrl!.searchParams.get('client_id')).toBe(documentUrl);

    const arrived = callback.next();
    await owner.goto(client.authorizationUrl!.href);
    expect((await owner.locator('.assistant-name').textContent())?.trim()).toBe(ASSISTANT);
    expect((await owner.locator('.publisher').textContent())?.trim()).toBe(new URL(documentUrl).host);
    await owner.click('button[value=approve]');
    const query = await arrived;
    expect(query.get('error')).toBeNull();
    // RFC 9207: the authorization response names the issuer, so a client talking to several servers cannot be mixed up.
    expect(query.get('iss')).toBe(base);
    expect(await auth(client, { serverUrl: `${base}/mcp`, authorizationCode: query.get('code')! })).toBe('AUTHORIZED');

    const mcp = new Client({ name: 'cimd-test-assistant', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${client.savedTokens!.access_token}` } },
    }));
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toContain('list_erp_services');
    await mcp.close();

    // Nothing was registered: the document is the registration.
    const stored = await server.app.db.kysely.selectFrom('oauth_records').select('id').where('kind', '=', 'Client').execute();
    expect(stored).toEqual([]);
    await owner.goto(`${base}/panel/developer/api-tokens`);
    expect(await owner.locator('tr', { hasText: 'AI assistant sign-in' }).textContent()).toContain(ASSISTANT);
  });

  it('refuses a sign-in whose document names another client_id, saying why on the page the browser lands on', async () => {
    const documentUrl = publishDocument('/impostor/client.json', { client_id: 'https://claude.ai/oauth/mcp-client-metadata.json' });
    const response = await fetch(authorizationRequest(documentUrl));
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain('invalid_client_metadata');
    expect(page).toContain('is not the address it was fetched from');
  });

  it('refuses a sign-in whose document is served through a redirect, or is larger than 5 KB', async () => {
    const redirected = host.publish('/moved/client.json', { redirectTo: publishDocument('/moved-to/client.json') });
    const redirectPage = await (await fetch(authorizationRequest(redirected))).text();
    expect(redirectPage).toContain('answered with a redirect (302)');

    const oversized = publishDocument('/oversized/client.json', { client_name: 'x'.repeat(6000) });
    const oversizedPage = await (await fetch(authorizationRequest(oversized))).text();
    expect(oversizedPage).toContain('larger than 5120 bytes');
  });

  /** An authorization request as an assistant would send it for this client_id. */
  function authorizationRequest(clientId: string): string {
    const url = new URL(`${base}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      client_id: clientId, response_type: 'code', redirect_uri: callback.url, scope: 'mcp', resource: `${base}/mcp`,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'some-state',
    })) url.searchParams.set(name, value);
    return url.href;
  }
});

describe('Client ID Metadata Documents on a server that keeps the SSRF guard on', () => {
  it('refuses a document on a loopback address', async () => {
    const server = await startTestServer();
    try {
      const url = new URL(`${server.baseUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: 'https://127.0.0.1:9/clients/app.json', response_type: 'code', redirect_uri: 'http://127.0.0.1:4000/callback',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
      }).toString();
      const response = await fetch(url);
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('points to a private, loopback or link-local address, which is not allowed');
    } finally {
      await server.close();
    }
  });
});
