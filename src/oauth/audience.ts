// RFC 8707 on the resource side: a token that a sign-in issued for one resource is refused by
// another. The MCP endpoint asks this on every request, after admit() found the token valid.
// Tokens made on the panel carry no audience; their "Accepted by" setting is the only rule.
import type { Kysely } from 'kysely';
import { invalidToken } from '../core/authenticate.js';
import type { AppError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { Database } from '../db/tables.js';
import { findSignInOfToken } from './sign-ins.js';

/**
 * Undefined at once for a token no sign-in issued (most requests: no lookup, no promise to wait
 * for); `resource` is only asked for a token that has an audience to compare it with.
 */
export function audienceRefusal(db: Kysely<Database>, principal: Principal, resource: () => string): Promise<AppError | undefined> | undefined {
  if (principal.source !== 'assistant' && principal.source !== 'cli') return undefined;
  return signInAudienceRefusal(db, principal, resource());
}

async function signInAudienceRefusal(db: Kysely<Database>, principal: Principal, resource: string): Promise<AppError | undefined> {
  const signIn = await findSignInOfToken(db, principal.tokenId);
  if (!signIn || signIn.resource === resource) return undefined;
  return invalidToken(`issued for another resource: ${signIn.resource}`, principal.tokenId, principal.teamId);
}
