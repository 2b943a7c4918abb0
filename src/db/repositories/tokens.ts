// API tokens: lookup by hash (the hot path), creation, and the restriction lists.
import type { Kysely } from 'kysely';
import type { AcceptedBy, Database, TokenSource } from '../tables.js';
import { fastPathFor } from '../connect.js';
import { newId, nowIso } from '../ids.js';
import { displayParts, generateTokenValue, hashTokenValue } from '../../auth/token-format.js';
import type { PermissionId } from '../../auth/permissions.js';
import { endSignInOfToken } from './oauth-records.js';

/** The token with its team, by the SHA-256 of its value: the query of every authenticated request. */
export async function findTokenWithTeamByHash(db: Kysely<Database>, tokenHash: string) {
  const fast = fastPathFor(db);
  if (fast) return fast.query('tokens.findTokenWithTeamByHash', (kysely, value) => tokenWithTeamByHash(kysely, value('hash'))).first({ hash: tokenHash });
  return tokenWithTeamByHash(db, tokenHash).executeTakeFirst();
}

/** The same row by the token's id: for acting later on what a token asked (an approved operation). */
export async function findTokenWithTeamById(db: Kysely<Database>, tokenId: string) {
  return tokenWithTeam(db).where('t.id', '=', tokenId).executeTakeFirst();
}

export type TokenWithTeam = NonNullable<Awaited<ReturnType<typeof findTokenWithTeamById>>>;

function tokenWithTeamByHash(db: Kysely<Database>, tokenHash: string) {
  return tokenWithTeam(db).where('t.token_hash', '=', tokenHash);
}

function tokenWithTeam(db: Kysely<Database>) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('teams as team', 'team.id', 't.team_id')
    .select([
      't.id', 't.name', 't.source', 't.team_id', 't.expires_on', 't.accepted_by', 't.full_access',
      't.permissions', 't.restrict_services', 't.restrict_servers', 't.revoked_at', 't.needs_approval',
      'team.name as team_name', 'team.plan', 'team.timezone',
    ]);
}

export interface NewTokenSettings {
  teamId: string;
  name: string;
  source: TokenSource;
  acceptedBy: AcceptedBy;
  fullAccess: boolean;
  permissions: readonly PermissionId[];
  serviceIds: readonly string[] | null;
  serverIds: readonly string[] | null;
  expiresOn: string | null;
  createdByUserId: string | null;
  assistantName?: string | null;
  /** Capability names this token may only ask for, each waiting for someone else's approval. */
  needsApproval?: readonly string[];
}

/** Creates a token and returns its value: the only moment the value exists outside the caller. */
export async function createToken(db: Kysely<Database>, settings: NewTokenSettings): Promise<{ id: string; value: string }> {
  const value = generateTokenValue();
  const id = await db.transaction().execute((trx) => insertTokenRow(trx, settings, value, displayParts(value)));
  return { id, value };
}

/**
 * Inserts the row of a token whose value was made elsewhere (an OAuth access token, src/oauth),
 * in the caller's transaction. Only the value's SHA-256 and its display parts are stored.
 */
export async function insertTokenRow(
  db: Kysely<Database>, settings: NewTokenSettings, value: string, display: { prefix: string; lastFour: string },
): Promise<string> {
  const id = newId('tok');
  const now = nowIso();
  await db.insertInto('api_tokens').values({
    id,
    team_id: settings.teamId,
    name: settings.name,
    token_hash: hashTokenValue(value),
    token_prefix: display.prefix,
    token_last_four: display.lastFour,
    source: settings.source,
    assistant_name: settings.assistantName ?? null,
    created_by_user_id: settings.createdByUserId,
    created_at: now,
    needs_approval: (settings.needsApproval ?? []).join(','),
    expires_on: settings.expiresOn,
    accepted_by: settings.acceptedBy,
    full_access: settings.fullAccess ? 1 : 0,
    permissions: settings.fullAccess ? '' : settings.permissions.join(','),
    restrict_services: settings.serviceIds ? 1 : 0,
    restrict_servers: settings.serverIds ? 1 : 0,
    revoked_at: null,
    replaced_by_token_id: null,
    last_used_at: null,
    last_used_channel: null,
    updated_at: now,
  }).execute();
  await replaceRestrictionLists(db, id, settings.serviceIds, settings.serverIds);
  return id;
}

/**
 * Gives a live token a new value (an OAuth refresh rotated its access token): the previous value
 * stops working at once, everything else stays. False when the token is revoked or unknown.
 */
export async function replaceTokenValue(
  db: Kysely<Database>, tokenId: string, value: string, display: { prefix: string; lastFour: string },
): Promise<boolean> {
  const result = await db.updateTable('api_tokens')
    .set({ token_hash: hashTokenValue(value), token_prefix: display.prefix, token_last_four: display.lastFour, updated_at: nowIso() })
    .where('id', '=', tokenId).where('revoked_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function replaceRestrictionLists(
  db: Kysely<Database>,
  tokenId: string,
  serviceIds: readonly string[] | null,
  serverIds: readonly string[] | null,
): Promise<void> {
  await db.deleteFrom('api_token_services').where('token_id', '=', tokenId).execute();
  await db.deleteFrom('api_token_servers').where('token_id', '=', tokenId).execute();
  if (serviceIds && serviceIds.length > 0) {
    await db.insertInto('api_token_services')
      .values([...new Set(serviceIds)].map((service_id) => ({ token_id: tokenId, service_id })))
      .execute();
  }
  if (serverIds && serverIds.length > 0) {
    await db.insertInto('api_token_servers')
      .values([...new Set(serverIds)].map((server_id) => ({ token_id: tokenId, server_id })))
      .execute();
  }
}

export async function restrictionLists(db: Kysely<Database>, tokenId: string) {
  const [services, servers] = await Promise.all([
    db.selectFrom('api_token_services').select('service_id').where('token_id', '=', tokenId).orderBy('service_id').execute(),
    db.selectFrom('api_token_servers').select('server_id').where('token_id', '=', tokenId).orderBy('server_id').execute(),
  ]);
  return { serviceIds: services.map((row) => row.service_id), serverIds: servers.map((row) => row.server_id) };
}

export async function revokeToken(db: Kysely<Database>, tokenId: string): Promise<void> {
  const now = nowIso();
  await db.updateTable('api_tokens').set({ revoked_at: now, updated_at: now })
    .where('id', '=', tokenId).where('revoked_at', 'is', null).execute();
  // A token issued by an OAuth sign-in: its refresh token must not mint a new value afterwards.
  await endSignInOfToken(db, tokenId);
}

export async function touchTokensLastUsed(
  db: Kysely<Database>,
  uses: readonly { tokenId: string; at: string; channel: string }[],
): Promise<void> {
  // In id order: two nodes flushing at once then lock the same rows in the same order (PostgreSQL
  // would otherwise end one of them as a deadlock).
  for (const use of [...uses].sort((a, b) => (a.tokenId < b.tokenId ? -1 : a.tokenId > b.tokenId ? 1 : 0))) {
    await db.updateTable('api_tokens').set({ last_used_at: use.at, last_used_channel: use.channel })
      .where('id', '=', use.tokenId).execute();
  }
}
