// An assistant's side of the OAuth sign-in, as a real MCP client does it: the SDK's own auth()
// (protected resource metadata, authorization server metadata, a Client ID Metadata Document's
// URL as client_id or dynamic client registration,
// PKCE S256, the code exchange), with an in-memory store, and a loopback HTTP server standing in
// for the assistant's redirect URI.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export class MemoryOAuthClient implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  savedTokens: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  private verifier = '';

  /** With a metadata document's URL, the SDK uses it as client_id where the server supports that (CIMD), and registers otherwise. */
  constructor(readonly redirectUrl: string, private readonly name: string, readonly clientMetadataUrl?: string) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name, redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() { return this.information; }
  saveClientInformation(information: OAuthClientInformationMixed) { this.information = information; }
  tokens() { return this.savedTokens; }
  saveTokens(tokens: OAuthTokens) { this.savedTokens = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

export interface Callback {
  url: string;
  /** The query the browser brought back on its next visit (code and state, or error). */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

/** The assistant's redirect URI: answers with a small page and hands the query to the test. */
export async function startCallbackServer(): Promise<Callback> {
  const waiting: ((query: URLSearchParams) => void)[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://callback');
    // Only the redirect itself counts: the browser also asks this host for /favicon.ico.
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>Signed in; you can close this window.</p>');
    waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
