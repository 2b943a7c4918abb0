// The OAuth server as mounted on the real HTTP server: its metadata at the addresses the MCP
// authorization specification makes clients look at, the protected resource metadata of /mcp and
// the 401 that points to it, dynamic registration, and the resource rules.
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
  it('describe one issuer, the public base, with PKCE S256, registration, device flow and revocation', async () => {
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
  it('answers 401 with a challenge naming the protected resource metadata', async () => {
    const response = await rpc(base, undefined, INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate'])
      .toBe(`Bearer realm="teaminfra", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('adds error="invalid_token" when the token is unknown', async () => {
    const response = await rpc(base, 'Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg', INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="teaminfra", error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"$/);
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

  it('refuses a client asking for the implicit flow', async () => {
    const refused = await json('/oauth/register', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://assistant.example/callback'], response_types: ['token'], grant_types: ['implicit'] }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_client_metadata');
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
