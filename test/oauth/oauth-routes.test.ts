// The OAuth server as mounted on the real HTTP server: its metadata at the addresses the MCP
// authorization specification makes clients look at, the protected resource metadata of /mcp and
// the 401 that points to it, dynamic registration, and the resource rules.
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/fixtures.js';
import { INITIALIZE, rawRequest, rpc } from '../mcp/clients.js';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  base = server.baseUrl;
});
afterAll(async () => { await server.close(); });

async function json(path: string, init?: RequestInit) {
  const response = await fetch(base + path, init);
  return { status: response.status, headers: response.headers, body: await response.json() as Record<string, any> };
}

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
});

describe('GET /.well-known/oauth-authorization-server and /.well-known/openid-configuration', () => {
  it('describe one issuer, the public base, with PKCE S256, registration, metadata documents, device flow and revocation', async () => {
    const oauth = await json('/.well-known/oauth-authorization-server');
    const openid = await json('/.well-known/openid-configuration');
    expect(oauth.status).toBe(200);
    expect(openid.body).toEqual(oauth.body);
    expect(oauth.body).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      // RFC 9207 (iss in authorization responses) and Client ID Metadata Documents beside registration.
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(oauth.body.grant_types_supported).toEqual(expect.arrayContaining([
      'authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code',
    ]));
    expect(oauth.body.grant_types_supported).not.toContain('implicit');
  });

  it('refuses a Host that is not a name of this server, since the Host names the issuer', async () => {
    const response = await rawRequest(base, { method: 'GET', path: '/.well-known/oauth-authorization-server', headers: { host: 'evil.example' } });
    expect(response.status).toBe(403);
    expect(response.json().code).toBe('host_not_allowed');
  });
});

describe('GET /.well-known/oauth-protected-resource/mcp', () => {
  it('names the /mcp resource and its authorization server (RFC 9728)', async () => {
    const metadata = await json('/.well-known/oauth-protected-resource/mcp');
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
    expect(metadata.body).toMatchObject({
      resource: `${base}/mcp`, authorization_servers: [base], bearer_methods_supported: ['header'], scopes_supported: ['mcp'],
    });
  });
});

describe('POST /mcp without a valid token', () => {
  it('answers 401 with a challenge naming the scope to ask for and the protected resource metadata', async () => {
    const response = await rpc(base, undefined, INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate'])
      .toBe(`Bearer realm="teaminfra", scope="mcp", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('adds error="invalid_token" when the token is unknown', async () => {
    const response = await rpc(base, 'Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg', INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="teaminfra", error="invalid_token", error_description="[^"]+", scope="mcp", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"$/);
  });
});

describe('POST /oauth/register (RFC 7591)', () => {
  it('registers a public client without a registration access token', async () => {
    const registered = await json('/oauth/register', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'An assistant', redirect_uris: ['http://127.0.0.1:4000/callback'], token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'mcp',
      }),
    });
    expect(registered.status).toBe(201);
    expect(registered.body.client_id).toBeTruthy();
    expect(registered.body.registration_access_token).toBeUndefined();
    const stored = await server.app.db.kysely.selectFrom('oauth_records').select(['kind', 'id']).where('kind', '=', 'Client').execute();
    expect(stored).toEqual([{ kind: 'Client', id: registered.body.client_id }]);
  });

  it('refuses a sector_identifier_uri without connecting to it when a client registers with one', async () => {
    // A plain TCP listener: a fetch of the https address would show here as a connection (its TLS handshake).
    const connections: string[] = [];
    const listener = createServer((socket) => { connections.push(String(socket.remoteAddress)); socket.destroy(); });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    const clients = () => server.app.db.kysely.selectFrom('oauth_records').select('id').where('kind', '=', 'Client').execute();
    const before = await clients();
    try {
      const refused = await json('/oauth/register', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Probe', redirect_uris: ['https://assistant.example/callback'], token_endpoint_auth_method: 'none',
          sector_identifier_uri: `https://127.0.0.1:${port}/sector.json`,
        }),
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringContaining('sector_identifier_uri is not supported') });
      // Any fetch would have been made before the answer; wait a little for a late one all the same.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(connections).toEqual([]);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
    expect(await clients()).toEqual(before);
  });

  it('refuses a client asking for the implicit flow', async () => {
    const refused = await json('/oauth/register', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://assistant.example/callback'], response_types: ['token'], grant_types: ['implicit'] }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_client_metadata');
  });
});

describe('POST /oauth/register: redirect URIs (RFC 8252, MCP authorization)', () => {
  const register = (redirectUris: string[]) => json('/oauth/register', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'An assistant', redirect_uris: redirectUris, token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    }),
  });

  it('registers a client when its redirect URIs are https, http to loopback, or an app scheme', async () => {
    for (const uris of [
      ['https://claude.ai/api/mcp/auth_callback'], ['http://localhost:6274/oauth/callback', 'http://[::1]:9000/cb'],
      ['cursor://anysphere.cursor-retrieval/oauth/user-callback'], ['com.example.app:/oauth2redirect'],
    ]) {
      const registered = await register(uris);
      expect(registered.status, `${uris.join(' ')}: ${JSON.stringify(registered.body)}`).toBe(201);
      expect(registered.body.redirect_uris).toEqual(uris);
    }
  });

  it('refuses with invalid_redirect_uri when a redirect URI is http to another host, or a scheme of the browser', async () => {
    for (const uri of ['http://evil.example/cb', 'javascript:alert(document.cookie)', 'data:text/html,hi', 'file:///tmp/cb']) {
      const refused = await register(['https://assistant.example/cb', uri]);
      expect(refused.status, uri).toBe(400);
      expect(refused.body.error).toBe('invalid_redirect_uri');
      expect(refused.body.error_description).toContain(uri);
    }
    expect(await server.app.db.kysely.selectFrom('oauth_records').select('id').where('payload', 'like', '%evil.example%').execute()).toEqual([]);
  });
});

describe('GET /oauth/authorize: the redirect_uri', () => {
  async function authorize(clientId: string, redirectUri: string) {
    const query = new URLSearchParams({
      client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope: 'mcp', state: 'xyz',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    });
    return fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
  }
  async function registered(redirectUri: string): Promise<string> {
    const response = await json('/oauth/register', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', response_types: ['code'] }),
    });
    expect(response.status).toBe(201);
    return response.body.client_id;
  }
  const goesToApproval = (response: Response) =>
    expect(new URL(response.headers.get('location') ?? '', base).pathname).toMatch(/^\/panel\/oauth\/[\w-]+$/);

  it('goes on to the approval page when the redirect_uri is the registered one, an app scheme included', async () => {
    for (const uri of ['https://assistant.example/cb', 'cursor://anysphere.cursor-retrieval/cb']) {
      const response = await authorize(await registered(uri), uri);
      expect(response.status, uri).toBe(303);
      goesToApproval(response);
    }
  });

  it('accepts another port when the registered redirect_uri is http to loopback (RFC 8252 §7.3)', async () => {
    const clientId = await registered('http://127.0.0.1:4000/callback');
    const response = await authorize(clientId, 'http://127.0.0.1:53124/callback');
    expect(response.status).toBe(303);
    goesToApproval(response);
  });

  it('refuses with invalid_redirect_uri, without redirecting, when the redirect_uri differs from every registered one', async () => {
    const https = await registered('https://assistant.example/cb');
    const loopback = await registered('http://127.0.0.1:4000/callback');
    for (const [clientId, uri] of [
      [https, 'https://assistant.example/cb/other'], [https, 'https://assistant.example:8443/cb'], [https, 'http://assistant.example/cb'],
      [loopback, 'http://127.0.0.1:4000/other'], [loopback, 'http://localhost:4000/callback'],
    ] as const) {
      const response = await authorize(clientId, uri);
      expect(response.status, uri).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).toContain('invalid_redirect_uri');
    }
  });
});

describe('POST /oauth/device_authorization', () => {
  it('gives the command line a code for the REST API resource', async () => {
    const started = await json('/oauth/device_authorization', form({ client_id: 'teaminfra-cli', scope: 'api' }));
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ verification_uri: `${base}/oauth/device`, expires_in: 600 });
    expect(started.body.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  });

  it('refuses the command line a token for the MCP resource (invalid_target)', async () => {
    const refused = await json('/oauth/device_authorization', form({ client_id: 'teaminfra-cli', scope: 'api', resource: `${base}/mcp` }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_target');
  });

  it('answers authorization_pending until a person approves', async () => {
    const started = await json('/oauth/device_authorization', form({ client_id: 'teaminfra-cli', scope: 'api' }));
    const polled = await json('/oauth/token', form({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code, client_id: 'teaminfra-cli',
    }));
    expect(polled.status).toBe(400);
    expect(polled.body.error).toBe('authorization_pending');
  });
});
