// Token management as the panel does it: list a team's tokens with who made them, change
// access, revoke. Never reachable from the API or MCP (no capability imports this file).
import type { Kysely } from 'kysely';
import type { AcceptedBy, Database } from '../tables.js';
import { nowIso } from '../ids.js';
import { parseStoredPermissions, type PermissionId } from '../../auth/permissions.js';
import { parseNeedsApproval } from '../../decisions/approvable.js';
import { createToken, replaceRestrictionLists, restrictionLists, revokeToken } from './tokens.js';

export async function listTeamTokens(db: Kysely<Database>, teamId: string) {
  const rows = await db.selectFrom('api_tokens as t')
    .leftJoin('users as u', 'u.id', 't.created_by_user_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 't.created_by_user_id').onRef('m.team_id', '=', 't.team_id'))
    .select([
      't.id', 't.name', 't.source', 't.assistant_name', 't.token_prefix', 't.token_last_four', 't.created_at', 't.expires_on',
      't.accepted_by', 't.full_access', 't.permissions', 't.restrict_services', 't.restrict_servers', 't.revoked_at',
      't.last_used_at', 't.last_used_channel', 't.needs_approval', 'u.email as creator_email', 'm.removed_at as creator_removed_at',
    ])
    .where('t.team_id', '=', teamId).orderBy('t.id', 'desc').execute();
  return Promise.all(rows.map(async (row) => ({ ...row, ...(await restrictionLists(db, row.id)) })));
}

export type TeamTokenRow = Awaited<ReturnType<typeof listTeamTokens>>[number];

export async function findTeamToken(db: Kysely<Database>, teamId: string, tokenId: string): Promise<TeamTokenRow | undefined> {
  return (await listTeamTokens(db, teamId)).find((token) => token.id === tokenId);
}

export interface AccessSettings {
  name: string;
  expiresOn: string | null;
  acceptedBy: AcceptedBy;
  fullAccess: boolean;
  permissions: readonly PermissionId[];
  serviceIds: readonly string[] | null;
  serverIds: readonly string[] | null;
  /** Approvable capability names (src/decisions/approvable.ts) this token's calls wait for approval on. */
  needsApproval: readonly string[];
}

/** Changes everything but the value; applies on the token's next request (no cache anywhere). */
export async function updateTokenAccess(db: Kysely<Database>, tokenId: string, settings: AccessSettings): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('api_tokens').set({
      name: settings.name, expires_on: settings.expiresOn, accepted_by: settings.acceptedBy,
      full_access: settings.fullAccess ? 1 : 0, permissions: settings.fullAccess ? '' : settings.permissions.join(','),
      restrict_services: settings.serviceIds ? 1 : 0, restrict_servers: settings.serverIds ? 1 : 0,
      needs_approval: settings.needsApproval.join(','), updated_at: nowIso(),
    }).where('id', '=', tokenId).execute();
    await replaceRestrictionLists(trx, tokenId, settings.serviceIds, settings.serverIds);
  });
}

/**
 * Replaces a token believed compromised: the old value is revoked first (so it is refused on
 * its very next request even if what follows fails), then a new token with the same name and
 * settings is created. Returns the new token; its value exists only in the caller's hands.
 */
export async function replaceToken(db: Kysely<Database>, old: TeamTokenRow, teamId: string, createdByUserId: string) {
  await revokeToken(db, old.id);
  const replacement = await createToken(db, {
    teamId, name: old.name, source: old.source, assistantName: old.assistant_name, acceptedBy: old.accepted_by,
    fullAccess: old.full_access === 1, permissions: parseStoredPermissions(old.permissions),
    serviceIds: old.restrict_services ? old.serviceIds : null, serverIds: old.restrict_servers ? old.serverIds : null,
    expiresOn: old.expires_on, createdByUserId, needsApproval: parseNeedsApproval(old.needs_approval),
  });
  await db.updateTable('api_tokens').set({ replaced_by_token_id: replacement.id }).where('id', '=', old.id).execute();
  return replacement;
}
