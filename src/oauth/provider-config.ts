// How the OAuth server (oidc-provider) is configured for teaminfra. What matters, and why:
// - Two kinds of client. Assistants register themselves (RFC 7591), or name their metadata
//   document's https URL as client_id (Client ID Metadata Documents, adapter.ts), and use the authorization code
//   flow with PKCE S256, for the resource `<base>/mcp`. The command line is one built-in public
//   client using the device flow (RFC 8628), for the resource `<base>/api`. A client gets tokens
//   for its own resource only (RFC 8707); anything else is `invalid_target`.
// - Every sign-in is approved by a person in the panel (/panel/oauth/:uid), which also chooses the
//   access; no grant is ever reused silently from an earlier one.
// - Access tokens are opaque and have no lifetime of their own: each is a team token (adapter.ts,
//   team-tokens.ts) that works until it is revoked, its "Expires on" passes, or a refresh replaces
//   it. Refresh tokens rotate at every use and lapse after 30 days unused.
// - No ID tokens, no userinfo, no DPoP (our resource servers take Bearer tokens only).
import type { Kysely } from 'kysely';
import { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { PERMISSION_IDS } from '../auth/permissions.js';
import type { Database } from '../db/tables.js';
import { deviceSuccessPage, oauthErrorPage, userCodeConfirmPage, userCodeInputPage } from '../panel/oauth-views.js';
import { ACCESS_TOKEN_BITS } from './access-token-shape.js';
import { databaseAdapter } from './adapter.js';
import type { ClientMetadataFetcher } from './client-metadata-fetcher.js';
import { apiResourceOf, mcpResourceOf } from './public-base.js';
import type { ServerSecrets } from './server-secrets.js';

export const CLI_CLIENT_ID = 'teaminfra-cli';
export const CLI_CLIENT_NAME = 'teaminfra command line';
/**
 * The scope of each resource. Access itself is chosen on the consent page: an assistant may also
 * ask for permissions by their ids as scopes (`services:operate`, as a step-up challenge names
 * them), which the consent page then offers ticked; the person decides.
 */
export const MCP_SCOPE = 'mcp';
export const API_SCOPE = 'api';
const MCP_RESOURCE_SCOPES = [MCP_SCOPE, ...PERMISSION_IDS].join(' ');
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  device_authorization: '/oauth/device_authorization',
  code_verification: '/oauth/device',
  jwks: '/oauth/jwks',
  // Disabled features still reserve a route; keep them all under /oauth.
  end_session: '/oauth/session/end',
  introspection: '/oauth/introspect',
  userinfo: '/oauth/userinfo',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
} as const;

export const INTERACTION_PATH = '/panel/oauth';

const DAY = 24 * 3600;
/** The resource a client may get tokens for, and its scope. */
export function resourceOfClient(base: string, clientId: string): { resource: string; scope: string } {
  return clientId === CLI_CLIENT_ID
    ? { resource: apiResourceOf(base), scope: API_SCOPE }
    : { resource: mcpResourceOf(base), scope: MCP_SCOPE };
}

function approvalPolicy() {
  const policy = interactionPolicy.base();
  // Every sign-in goes through the panel, whatever the request names: the library's own checks
  // prompt only for scopes not granted yet.
  policy.get('consent')?.checks.add(new interactionPolicy.Check(
    'panel_approval', 'a person approves every sign-in in the panel',
    (ctx) => (ctx.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT),
  ));
  return policy;
}

export function providerConfiguration(
  db: Kysely<Database>, base: string, secrets: ServerSecrets, clientMetadata: ClientMetadataFetcher,
): Configuration {
  return {
    adapter: databaseAdapter(db, clientMetadata),
    // The library's own fetching of metadata documents (features.clientIdMetadataDocument) stays off:
    // our adapter fetches them through the webhooks' SSRF guard (the draft's AS metadata flag).
    discovery: { client_id_metadata_document_supported: true },
    clients: [{
      client_id: CLI_CLIENT_ID, client_name: CLI_CLIENT_NAME, application_type: 'native',
      token_endpoint_auth_method: 'none', grant_types: [DEVICE_CODE_GRANT], response_types: [], redirect_uris: [],
    }],
    async findAccount(_ctx, id) {
      // Tokens outlive their creator's membership (DESIGN.md), so a refresh needs only the user row.
      const user = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst();
      return user ? { accountId: user.id, claims: async () => ({ sub: user.id }) } : undefined;
    },
    jwks: secrets.jwks as Configuration['jwks'],
    cookies: {
      keys: secrets.cookieKeys,
      names: { session: 'teaminfra_oauth_session', interaction: 'teaminfra_oauth_interaction', resume: 'teaminfra_oauth_resume' },
    },
    scopes: ['openid', 'offline_access', MCP_SCOPE, API_SCOPE],
    routes: OAUTH_ROUTES,
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`, policy: approvalPolicy() },
    // Only the grant the panel just created for this request; never one from an earlier sign-in.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // The authorization code flow only (no implicit, no ID tokens in the front channel), always
    // with PKCE, as the MCP authorization specification requires (S256, the only method the library
    // offers since v9).
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    formats: { bitsOfOpaqueRandomness: ACCESS_TOKEN_BITS },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      // No registration access tokens (RFC 7592 management is off): nothing to store or leak.
      registration: { enabled: true, issueRegistrationAccessToken: false } as NonNullable<Configuration['features']>['registration'],
      // A client may revoke only its own tokens (RFC 7009). Another client's token is left as it is:
      // silently for a public client (the answer then says nothing about the token), with an error
      // for one that authenticated. The library's default does the same, and asks to be replaced.
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      deviceFlow: {
        enabled: true, charset: 'base-20', mask: '****-****',
        userCodeInputSource: userCodeInputPage, userCodeConfirmSource: userCodeConfirmPage, successSource: deviceSuccessPage,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => resourceOfClient(base, client.clientId).resource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator, client) {
          const own = resourceOfClient(base, client.clientId);
          if (resourceIndicator !== own.resource) {
            throw new errors.InvalidTarget(`this client can get tokens for ${own.resource} only`);
          }
          return { scope: own.scope === MCP_SCOPE ? MCP_RESOURCE_SCOPES : own.scope, audience: own.resource, accessTokenFormat: 'opaque' };
        },
      },
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // Revoking a refresh token (or reusing a rotated one, or a code) ends the whole grant; revoking
    // an access token revokes its team token (adapter.ts), which ends the grant as well.
    revokeGrantPolicy: () => true,
    expiresWithSession: async () => false,
    ttl: {
      // AccessToken and Grant: none, they have no lifetime of their own (see the module comment and
      // token-lifetimes.ts, which also keeps expires_in out of the token response).
      RefreshToken: 30 * DAY,
      AuthorizationCode: 60,
      DeviceCode: 10 * 60,
      Interaction: 30 * 60,
      Session: 3600,
      IdToken: 3600,
    },
    clientBasedCORS: (_ctx: KoaContextWithOIDC, origin: string, client) =>
      client.clientAuthMethod === 'none' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] } as Configuration['enabledJWA'],
    clientDefaults: {
      grant_types: ['authorization_code'], response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'ES256',
    },
    renderError: async (ctx, out) => oauthErrorPage(ctx, out),
    // sector_identifier_uri only serves pairwise subject identifiers, which we do not issue, and
    // the library would fetch it itself, outside the guard our own fetches pass through (any
    // host and port, loopback and 169.254.169.254 included, its timing telling open ports from
    // closed): a client naming one, registered or from a metadata document, is refused unfetched.
    // (The library's option; @types/oidc-provider does not declare it.)
    ...({
      sectorIdentifierUriValidate: () => {
        throw new errors.InvalidClientMetadata('sector_identifier_uri is not supported: this server issues no pairwise subject identifiers');
      },
    } as Partial<Configuration>),
  };
}
