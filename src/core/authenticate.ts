// From a bearer value to a Principal. Every way a token can be unusable gives the same public
// answer (401 invalid_token); the precise reason goes to the audit log only, so that a caller
// learns nothing about which tokens exist.
import type { Kysely } from 'kysely';
import { AppError } from './errors.js';
import type { Principal } from './principal.js';
import type { Database } from '../db/tables.js';
import { findTokenWithTeamByHash, type TokenWithTeam } from '../db/repositories/tokens.js';
import { parseNeedsApproval } from '../decisions/approvable.js';
import { isOAuthAccessTokenShape } from '../oauth/access-token-shape.js';
import { isExpired } from '../auth/expiry.js';
import { expandPermissions, parseStoredPermissions, type PermissionId } from '../auth/permissions.js';
import { hashTokenValue, isWellFormedToken } from '../auth/token-format.js';

export const INVALID_TOKEN_SENTENCE =
  'The API token is missing, malformed, unknown, revoked or expired. Send a valid token as "Authorization: Bearer <token>".';

export function invalidToken(internalReason: string, tokenId?: string, teamId?: string): AppError {
  const error = new AppError('invalid_token', INVALID_TOKEN_SENTENCE, {}, internalReason);
  return Object.assign(error, { tokenId, teamId });
}

/** Extracts the token from an Authorization header value; undefined when absent or not Bearer. */
export function bearerFrom(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

export async function authenticate(db: Kysely<Database>, bearer: string | undefined, now = new Date()): Promise<Principal> {
  if (bearer === undefined) throw invalidToken('missing');
  // Two shapes: our `tinf_` values, and the access tokens of OAuth sign-ins (src/oauth), which are
  // team tokens too, stored the same way. Anything else is refused without a lookup.
  if (!isWellFormedToken(bearer) && !isOAuthAccessTokenShape(bearer)) throw invalidToken('malformed');
  const row = await findTokenWithTeamByHash(db, hashTokenValue(bearer));
  if (!row) throw invalidToken('unknown');
  if (row.revoked_at !== null) throw invalidToken('revoked', row.id, row.team_id);
  if (isExpired(row.expires_on, row.timezone, now)) throw invalidToken('expired', row.id, row.team_id);
  return principalOf(row);
}

/** The principal a token's row describes (its validity already checked by the caller). */
export function principalOf(row: TokenWithTeam): Principal {
  const fullAccess = row.full_access === 1;
  return {
    tokenId: row.id,
    tokenName: row.name,
    source: row.source,
    teamId: row.team_id,
    teamName: row.team_name,
    plan: row.plan,
    timezone: row.timezone,
    acceptedBy: row.accepted_by,
    expiresOn: row.expires_on,
    fullAccess,
    permissions: fullAccess ? NO_PERMISSIONS : heldPermissions(row.permissions),
    reach: {
      teamId: row.team_id,
      tokenId: row.id,
      restrictServices: row.restrict_services === 1,
      restrictServers: row.restrict_servers === 1,
    },
    needsApproval: row.needs_approval === '' ? NO_APPROVALS : new Set(parseNeedsApproval(row.needs_approval)),
  };
}

const NO_PERMISSIONS: ReadonlySet<PermissionId> = new Set();
const NO_APPROVALS: ReadonlySet<string> = new Set();
const MAX_REMEMBERED_LISTS = 256;
const heldByStored = new Map<string, ReadonlySet<PermissionId>>();

/**
 * The permissions a stored list grants, implications applied: read on every request, from a
 * handful of distinct lists, so each list is parsed once (a few hundred at most are kept). The
 * sets are shared between principals, which only read them (ReadonlySet).
 */
function heldPermissions(stored: string): ReadonlySet<PermissionId> {
  let held = heldByStored.get(stored);
  if (held === undefined) {
    if (heldByStored.size >= MAX_REMEMBERED_LISTS) heldByStored.clear();
    held = expandPermissions(parseStoredPermissions(stored));
    heldByStored.set(stored, held);
  }
  return held;
}
