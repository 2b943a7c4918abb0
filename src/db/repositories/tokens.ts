// API tokens: lookup by hash (the hot path), creation, and the restriction lists.
import type { Kysely } from 'kysely';
import type { AcceptedBy, Database, TokenSource } from '../tables.js';
import { fastPathFor } from '../connect.js';
import { newId, nowIso } from '../ids.js';
import { displayParts, generateTokenValue, hashTokenValue } from '../../auth/token-format.js';
import type { PermissionId } from '../../auth/permissions.js';

/** The token with its team, by the SHA-256 of its value: the query of every authenticated request. */
export async function findTokenWithTeamByHash(db: Kysely<Database>, tokenHash: string) {
  const fast = fastPathFor(db);
  if (fast) return fast.query('tokens.findTokenWithTeamByHash', (kysely, value) => tokenWithTeamByHash(kysely, value('hash'))).first({ hash: tokenHash });
  return tokenWithTeamByHash(db, tokenHash).executeTakeFirst();
}

function tokenWithTeamByHash(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('teams as team', 'team.id', 't.team_id')
    .select([
      't.id', 't.name', 't.source', 't.team_id', 't.expires_on', 't.accepted_by', 't.full_access',
      't.permissions', 't.restrict_services', 't.restrict_servers', 't.revoked_at', 't.last_used_at',
      'team.name as team_name', 'team.plan', 'team.timezone',
    ])
    .where('t.token_hash', '=', tokenHash);
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
}

/** Creates a token and returns its value: the only moment the value exists outside the caller. */
export async function createToken(db: Kysely<Database>, settings: NewTokenSettings): Promise<{ id: string; value: string }> {
  const value = generateTokenValue();
  const id = newId('tok');
  const { prefix, lastFour } = displayParts(value);
  const now = nowIso();
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('api_tokens').values({
      id,
      team_id: settings.teamId,
      name: settings.name,
      token_hash: hashTokenValue(value),
      token_prefix: prefix,
      token_last_four: lastFour,
      source: settings.source,
      assistant_name: settings.assistantName ?? null,
      created_by_user_id: settings.createdByUserId,
      created_at: now,
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
    await replaceRestrictionLists(trx, id, settings.serviceIds, settings.serverIds);
  });
  return { id, value };
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
}

export async function touchTokensLastUsed(
  db: Kysely<Database>,
  uses: readonly { tokenId: string; at: string; channel: string }[],
): Promise<void> {
  for (const use of uses) {
    await db.updateTable('api_tokens').set({ last_used_at: use.at, last_used_channel: use.channel })
      .where('id', '=', use.tokenId).execute();
  }
}
