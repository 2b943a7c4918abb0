// What a Client ID Metadata Document must be (draft-ietf-oauth-client-id-metadata-document, the
// way MCP clients sign in without registering): the client's id is an https URL, and the JSON
// document served there is its registration. Two checks here, no I/O:
// - the URL itself (https, a path, no dot segments, no fragment, query or user name);
// - the document: a JSON object whose client_id is that very URL, character for character (else
//   anyone could serve a document naming another client), a public client (no shared secret: the
//   document is public), with redirect URIs, asking only for the code flow we serve.
// What comes out is the metadata handed to oidc-provider, which then applies its own schema and
// our redirect URI rules (redirect-uris.ts) as for a registered client.

/** Why something cannot be a client's metadata document (or its URL); the message is a sentence. */
export class ClientMetadataRefusal extends Error {}

/** The metadata we take from a document; anything else in it is ignored (notably `scope`, which would narrow step-up). */
const KEPT_FIELDS = ['client_name', 'client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'contacts', 'software_id', 'software_version'] as const;
const LINK_FIELDS = new Set(['client_uri', 'logo_uri', 'policy_uri', 'tos_uri']);
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);
/** Shared secrets cannot be kept in a public document; private_key_jwt is not served here. */
const AUTH_METHOD = 'none';

/** True when a client_id is meant as a metadata document URL (and so is never a registered client's id). */
export function namesMetadataDocument(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

/** Why this URL cannot be a client_id; undefined when it can. */
export function clientIdUrlRefusal(clientId: string): string | undefined {
  const url = URL.parse(clientId);
  if (!url || url.protocol !== 'https:' || /[\s\\]/.test(clientId)) return 'is not an https URL';
  if (url.username || url.password || /^https:\/\/[^/?#]*@/i.test(clientId)) return 'must not contain a user name or password';
  if (clientId.includes('#')) return 'must not contain a fragment';
  if (clientId.includes('?')) return 'must not contain a query';
  const rawPath = clientId.replace(/^https:\/\/[^/]*/i, '');
  if (rawPath === '' || rawPath === '/') return 'must have a path (the document\'s own address)';
  if (rawPath.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return 'must not contain "." or ".." path segments';
  return undefined;
}

export type ClientProperties = Record<string, unknown> & { client_id: string; redirect_uris: string[] };

/** The client's metadata from the document's text, or a refusal saying what is wrong with it. */
export function clientPropertiesOf(clientId: string, text: string): ClientProperties {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new ClientMetadataRefusal('it is not JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new ClientMetadataRefusal('it is not a JSON object');
  const fields = document as Record<string, unknown>;
  if (fields.client_id !== clientId) {
    throw new ClientMetadataRefusal(`its client_id (${JSON.stringify(String(fields.client_id ?? '')).slice(0, 200)}) is not the address it was fetched from`);
  }
  if ('client_secret' in fields || 'client_secret_expires_at' in fields) throw new ClientMetadataRefusal('it contains a client secret, which a public document cannot keep');
  const method = fields.token_endpoint_auth_method ?? AUTH_METHOD;
  if (method !== AUTH_METHOD) throw new ClientMetadataRefusal(`its token_endpoint_auth_method is ${JSON.stringify(method)}; only "none" (a public client with PKCE) is accepted`);
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0 || !redirectUris.every((uri) => typeof uri === 'string')) {
    throw new ClientMetadataRefusal('it has no redirect_uris');
  }
  const grantTypes = fields.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grantTypes) || !grantTypes.every((grant) => GRANT_TYPES.has(grant as string))) {
    throw new ClientMetadataRefusal('its grant_types may name only authorization_code and refresh_token');
  }
  const responseTypes = fields.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.some((type) => type !== 'code')) throw new ClientMetadataRefusal('its response_types may name only code');

  const properties: ClientProperties = {
    client_id: clientId, redirect_uris: redirectUris as string[], grant_types: grantTypes, response_types: ['code'],
    token_endpoint_auth_method: AUTH_METHOD,
  };
  for (const field of KEPT_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    if (LINK_FIELDS.has(field) && (typeof value !== 'string' || URL.parse(value)?.protocol !== 'https:')) {
      throw new ClientMetadataRefusal(`its ${field} is not an https URL`);
    }
    properties[field] = value;
  }
  return properties;
}
