// The panel's side of an OAuth interaction: what is being asked (which client, for which
// resource, by which flow), and finishing it once a person approved or declined. Approving
// creates the grant and the sign-in record holding the chosen access; the team token itself is
// made when the client collects its access token (team-tokens.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import { expandPermissions, isPermissionId, type PermissionId } from '../auth/permissions.js';
import type { AccessSettings } from '../db/repositories/token-admin.js';
import type { Database } from '../db/tables.js';
import type { OAuthInstance } from './oauth-server.js';
import { namesMetadataDocument } from './client-metadata-document.js';
import { API_SCOPE, CLI_CLIENT_ID, MCP_SCOPE, resourceOfClient } from './provider-config.js';
import { createSignIn } from './sign-ins.js';

export interface PendingSignIn {
  uid: string;
  kind: 'assistant' | 'cli';
  /** True when the client did not start it from a web page but with a code (device flow). */
  withCode: boolean;
  clientId: string;
  clientName: string;
  /** For a client known by its metadata document (an https client_id): the host that publishes it. */
  metadataDocumentHost: string | null;
  /** Where the browser is sent back to (host, or scheme for an app's own scheme); null for the device flow. */
  redirectTarget: string | null;
  /** The origin of that redirect (or the app's scheme), for the consent page's form-action. */
  redirectOrigin: string | null;
  resource: string;
  scope: string;
  requestedScopes: string[];
  /** Permissions the assistant asks for by their ids as scopes (a step-up); offered ticked on the consent page. */
  requestedPermissions: PermissionId[];
  device: { ip: string | null; userAgent: string | null; userCode: string | null } | null;
}

export class SignInNotFound extends Error {}

const STATIC_SCOPES = new Set(['openid', 'offline_access', MCP_SCOPE, API_SCOPE]);

type Raw = { req: IncomingMessage; res: ServerResponse };

export async function pendingSignIn(instance: OAuthInstance, base: string, { req, res }: Raw): Promise<PendingSignIn> {
  const { provider } = instance;
  let details: Awaited<ReturnType<typeof provider.interactionDetails>>;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    throw new SignInNotFound('no interaction');
  }
  const clientId = String(details.params.client_id ?? '');
  const client = await provider.Client.find(clientId);
  if (!client) throw new SignInNotFound('unknown client');
  const metadata = client.metadata();
  const { resource, scope } = resourceOfClient(base, clientId);
  const requestedScopes = String(details.params.scope ?? '').split(' ').filter(Boolean);
  const deviceCode = typeof details.deviceCode === 'string' ? await provider.DeviceCode.find(details.deviceCode) : undefined;
  const deviceInfo = (deviceCode?.deviceInfo ?? {}) as { ip?: string; ua?: string };
  return {
    uid: details.uid,
    kind: clientId === CLI_CLIENT_ID ? 'cli' : 'assistant',
    withCode: typeof details.deviceCode === 'string',
    clientId,
    clientName: typeof metadata.client_name === 'string' && metadata.client_name.trim() !== '' ? metadata.client_name.trim() : clientId,
    metadataDocumentHost: namesMetadataDocument(clientId) ? URL.parse(clientId)?.host ?? null : null,
    redirectTarget: redirectTargetOf(details.params.redirect_uri),
    redirectOrigin: redirectOriginOf(details.params.redirect_uri),
    resource,
    scope,
    requestedScopes,
    requestedPermissions: clientId === CLI_CLIENT_ID ? [] : requestedScopes.filter(isPermissionId),
    device: deviceCode
      ? { ip: deviceInfo.ip ?? null, userAgent: deviceInfo.ua ?? null, userCode: displayUserCode(deviceCode.userCode) }
      : null,
  };
}

/** Approves: returns where to send the browser next (back into the OAuth flow). */
export async function approveSignIn(
  instance: OAuthInstance, db: Kysely<Database>, raw: Raw, pending: PendingSignIn,
  approver: { userId: string; teamId: string }, settings: AccessSettings,
): Promise<string> {
  const { provider } = instance;
  const grant = new provider.Grant({ accountId: approver.userId, clientId: pending.clientId });
  const granted = [pending.scope, ...(pending.requestedScopes.includes('offline_access') ? ['offline_access'] : [])];
  grant.addOIDCScope(granted.join(' '));
  // Every scope asked for must be answered, granted or refused, or the library asks again.
  const refused = pending.requestedScopes.filter((scope) => STATIC_SCOPES.has(scope) && !granted.includes(scope));
  if (refused.length > 0) grant.rejectOIDCScope(refused.join(' '));
  // The permissions asked for as scopes are granted as scopes when the person chose them (the
  // token's access is what was chosen either way); the others are refused, so the token response
  // tells the client what it got and the library does not ask again.
  const chosen = expandPermissions(settings.permissions);
  const grantedPermissions = pending.requestedPermissions.filter((permission) => settings.fullAccess || chosen.has(permission));
  const refusedPermissions = pending.requestedPermissions.filter((permission) => !grantedPermissions.includes(permission));
  grant.addResourceScope(pending.resource, [pending.scope, ...grantedPermissions].join(' '));
  if (refusedPermissions.length > 0) grant.rejectResourceScope(pending.resource, refusedPermissions.join(' '));
  const grantId = await grant.save();
  await createSignIn(db, {
    grantId, kind: pending.kind, teamId: approver.teamId, userId: approver.userId, clientId: pending.clientId,
    clientName: pending.clientName, resource: pending.resource, settings,
  });
  return provider.interactionResult(raw.req, raw.res, {
    login: { accountId: approver.userId, remember: false },
    consent: { grantId },
  }, { mergeWithLastSubmission: false });
}

export async function declineSignIn(instance: OAuthInstance, raw: Raw, description: string): Promise<string> {
  return instance.provider.interactionResult(raw.req, raw.res, { error: 'access_denied', error_description: description },
    { mergeWithLastSubmission: false });
}

/** Stored without its dash (the library normalizes what people type); shown as the CLI shows it. */
function displayUserCode(normalized: string | undefined): string | null {
  if (!normalized) return null;
  return normalized.length === 8 ? `${normalized.slice(0, 4)}-${normalized.slice(4)}` : normalized;
}

function redirectTargetOf(redirectUri: unknown): string | null {
  if (typeof redirectUri !== 'string') return null;
  const url = URL.parse(redirectUri);
  if (!url) return null;
  return url.host !== '' ? url.host : url.protocol;
}

function redirectOriginOf(redirectUri: unknown): string | null {
  if (typeof redirectUri !== 'string') return null;
  const url = URL.parse(redirectUri);
  if (!url) return null;
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}
