// The access token the OAuth server issues IS a team token. The first access token of a sign-in
// creates its api_tokens row (the value's SHA-256, the access chosen on the consent page); a
// refresh gives that same row the new value, so the person's choice (and any later edit on the
// API Tokens page) carries over and the list shows one token per sign-in. authenticate() and
// invoke() then treat it like any other token: there is no second check path.
import type { Kysely } from 'kysely';
import { isExpired } from '../auth/expiry.js';
import { displayParts, hashTokenValue } from '../auth/token-format.js';
import { insertTokenRow, replaceTokenValue, revokeToken } from '../db/repositories/tokens.js';
import type { Database } from '../db/tables.js';
import { deleteRecordsOfGrant, keepRecord } from '../db/repositories/oauth-records.js';
import { findSignIn, linkSignInToToken } from './sign-ins.js';

/**
 * Called by the adapter before it stores an AccessToken: makes `value` the value of the sign-in's
 * team token. Throws (and no token is answered) when the grant has no sign-in or its token was
 * revoked meanwhile.
 */
export async function issueTeamToken(db: Kysely<Database>, value: string, grantId: string | undefined): Promise<void> {
  const signIn = grantId ? await findSignIn(db, grantId) : undefined;
  if (!grantId || !signIn) throw new Error('An access token was requested for a grant without a sign-in approved in the panel.');
  await db.transaction().execute(async (trx) => {
    if (signIn.tokenId === null) {
      const tokenId = await insertTokenRow(trx, {
        ...signIn.settings, teamId: signIn.teamId, createdByUserId: signIn.userId,
        source: signIn.kind, assistantName: signIn.kind === 'assistant' ? signIn.clientName : null,
      }, value, displayParts(value));
      await linkSignInToToken(trx, grantId, tokenId);
      await keepRecord(trx, 'Grant', grantId);
      return;
    }
    if (!(await replaceTokenValue(trx, signIn.tokenId, value, displayParts(value)))) {
      throw new Error('The team token of this sign-in was revoked.');
    }
    // One live value per sign-in: the access token records the refresh replaced go too.
    await deleteRecordsOfGrant(trx, 'AccessToken', grantId);
  });
}

/** The OAuth server revoked an access token (RFC 7009, e.g. `teaminfra logout`): revoke its team token. */
export async function revokeTeamTokenOfValue(db: Kysely<Database>, value: string): Promise<void> {
  const row = await db.selectFrom('api_tokens').select('id').where('token_hash', '=', hashTokenValue(value))
    .where('source', 'in', ['assistant', 'cli']).executeTakeFirst();
  if (row) await revokeToken(db, row.id);
}

/** The OAuth server revoked a whole grant (a refresh token or code used twice, a revocation). */
export async function revokeTeamTokenOfGrant(db: Kysely<Database>, grantId: string): Promise<void> {
  const signIn = await findSignIn(db, grantId);
  if (signIn?.tokenId) await revokeToken(db, signIn.tokenId);
}

/**
 * Whether a grant may still be used (to exchange its code, or to refresh): its sign-in exists and,
 * once it issued a token, that token is neither revoked nor expired. So revoking or expiring the
 * token on the API Tokens page ends the refresh chain, whatever the OAuth records say.
 */
export async function grantIsLive(db: Kysely<Database>, grantId: string): Promise<boolean> {
  const signIn = await findSignIn(db, grantId);
  if (!signIn) return false;
  if (signIn.tokenId === null) return true;
  const token = await db.selectFrom('api_tokens as t').innerJoin('teams as team', 'team.id', 't.team_id')
    .select(['t.revoked_at', 't.expires_on', 'team.timezone']).where('t.id', '=', signIn.tokenId).executeTakeFirst();
  return token !== undefined && token.revoked_at === null && !isExpired(token.expires_on, token.timezone);
}
