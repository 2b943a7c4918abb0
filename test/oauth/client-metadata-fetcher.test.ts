// Fetching Client ID Metadata Documents from a real https server on loopback, whose certificate
// comes from a CA made for this run and trusted by the fetcher only through its explicit option.
// Loopback is a private address, so the fetcher that reaches it has allowPrivate (the test-only
// switch, as webhooks have); a second fetcher without it shows the SSRF guard refusing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIdUrlRefusal } from '../../src/oauth/client-metadata-document.js';
import { ClientMetadataFetcher, DEFAULT_CLIENT_METADATA_CONFIG } from '../../src/oauth/client-metadata-fetcher.js';
import type { Lookup } from '../../src/webhooks/url-safety.js';
import { makeTestCertificates, type TestCertificates } from '../support/test-ca.js';
import { startMetadataHost, type MetadataHost } from './support/metadata-host.js';

let certificates: TestCertificates;
let host: MetadataHost;
let fetcher: ClientMetadataFetcher;

const documentAt = (url: string, extra: Record<string, unknown> = {}) => ({
  client_id: url, client_name: 'Test assistant', redirect_uris: ['http://127.0.0.1:4000/callback'],
  grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...extra,
});

beforeAll(async () => {
  certificates = makeTestCertificates();
  host = await startMetadataHost(certificates);
  fetcher = new ClientMetadataFetcher({ ...DEFAULT_CLIENT_METADATA_CONFIG, allowPrivate: true, trustedCaPem: certificates.caPem });
});
afterAll(async () => {
  await fetcher?.close();
  await host?.close();
});

describe('ClientMetadataFetcher.find', () => {
  it('returns the metadata of a document whose client_id is its own URL, keeping only what a public client may say', async () => {
    const url = host.urlOf('/clients/assistant.json');
    host.publish('/clients/assistant.json', { document: documentAt(url, { scope: 'mcp', jwks_uri: 'https://elsewhere.example/jwks' }) });
    expect(await fetcher.find(url)).toEqual({
      client_id: url, client_name: 'Test assistant', redirect_uris: ['http://127.0.0.1:4000/callback'],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    });
  });

  it('fetches a document once and answers from its cache afterwards, for concurrent requests too', async () => {
    const url = host.publish('/clients/cached.json', { document: documentAt(host.urlOf('/clients/cached.json')), cacheControl: 'max-age=600' });
    await Promise.all([fetcher.find(url), fetcher.find(url), fetcher.find(url)]);
    await fetcher.find(url);
    expect(host.requestsFor('/clients/cached.json')).toBe(1);
  });

  it('refuses a document whose client_id differs from the URL it was fetched from', async () => {
    const url = host.publish('/clients/impostor.json', { document: documentAt('https://claude.ai/oauth/client.json') });
    await expect(fetcher.find(url)).rejects.toThrow(/client_id \("https:\/\/claude\.ai\/oauth\/client\.json"\) is not the address it was fetched from/);
  });

  it('refuses a redirect instead of following it', async () => {
    const target = host.publish('/clients/real.json', { document: documentAt(host.urlOf('/clients/real.json')) });
    const url = host.publish('/clients/moved.json', { redirectTo: target });
    await expect(fetcher.find(url)).rejects.toThrow('its address answered with a redirect (302)');
    expect(host.requestsFor('/clients/real.json')).toBe(0);
  });

  it('refuses a document larger than 5 KB, without reading it all', async () => {
    const url = host.urlOf('/clients/huge.json');
    host.publish('/clients/huge.json', { document: documentAt(url, { client_name: 'x'.repeat(6000) }) });
    await expect(fetcher.find(url)).rejects.toThrow('it is larger than 5120 bytes');
  });

  it('refuses a document that keeps a client secret or asks for a shared-secret authentication', async () => {
    const secret = host.urlOf('/clients/secret.json');
    host.publish('/clients/secret.json', { document: documentAt(secret, { client_secret: 's3cret' }) });
    await expect(fetcher.find(secret)).rejects.toThrow('it contains a client secret');
    const basic = host.urlOf('/clients/basic.json');
    host.publish('/clients/basic.json', { document: documentAt(basic, { token_endpoint_auth_method: 'client_secret_basic' }) });
    await expect(fetcher.find(basic)).rejects.toThrow('only "none" (a public client with PKCE) is accepted');
  });

  it('refuses what is not JSON, and an address that answers 404', async () => {
    const url = host.publish('/clients/html.json', { raw: '<html>hello</html>' });
    await expect(fetcher.find(url)).rejects.toThrow('it is not JSON');
    await expect(fetcher.find(host.urlOf('/clients/missing.json'))).rejects.toThrow('its address answered 404, not 200');
  });
});

describe('ClientMetadataFetcher: the SSRF guard of webhooks, and TLS verification', () => {
  it('refuses a loopback address written in the URL when private addresses are not allowed', async () => {
    const guarded = new ClientMetadataFetcher({ ...DEFAULT_CLIENT_METADATA_CONFIG, trustedCaPem: certificates.caPem });
    const url = host.publish('/clients/private.json', { document: documentAt(host.urlOf('/clients/private.json')) });
    await expect(guarded.find(url)).rejects.toThrow('its address points to a private, loopback or link-local address, which is not allowed');
    expect(host.requestsFor('/clients/private.json')).toBe(0);
    await guarded.close();
  });

  it('refuses a host name that resolves to a private address, at connection time', async () => {
    const toLoopback: Lookup = (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const guarded = new ClientMetadataFetcher({ ...DEFAULT_CLIENT_METADATA_CONFIG, trustedCaPem: certificates.caPem }, toLoopback);
    await expect(guarded.find('https://assistant.example/clients/app.json'))
      .rejects.toThrow('its address resolves to a private, loopback or link-local address, which is not allowed');
    await guarded.close();
  });

  it('does not trust the test CA unless told to', async () => {
    const untrusting = new ClientMetadataFetcher({ ...DEFAULT_CLIENT_METADATA_CONFIG, allowPrivate: true });
    const url = host.publish('/clients/untrusted.json', { document: documentAt(host.urlOf('/clients/untrusted.json')) });
    await expect(untrusting.find(url)).rejects.toThrow(/it could not be fetched \(\w+/);
    await untrusting.close();
  });
});

describe('clientIdUrlRefusal', () => {
  it('accepts an https URL with a path', () => {
    expect(clientIdUrlRefusal('https://vscode.dev/oauth/client-metadata.json')).toBeUndefined();
  });

  it('refuses http, a bare origin, dot segments, a fragment, a query and a user name', () => {
    expect(clientIdUrlRefusal('http://app.example/client.json')).toBe('is not an https URL');
    expect(clientIdUrlRefusal('https://app.example/')).toMatch(/must have a path/);
    expect(clientIdUrlRefusal('https://app.example')).toMatch(/must have a path/);
    expect(clientIdUrlRefusal('https://app.example/a/../client.json')).toMatch(/"\." or "\.\." path segments/);
    expect(clientIdUrlRefusal('https://app.example/a/%2E%2E/client.json')).toMatch(/"\." or "\.\." path segments/);
    expect(clientIdUrlRefusal('https://app.example/client.json#x')).toBe('must not contain a fragment');
    expect(clientIdUrlRefusal('https://app.example/client.json?v=1')).toBe('must not contain a query');
    expect(clientIdUrlRefusal('https://me@app.example/client.json')).toBe('must not contain a user name or password');
  });
});
