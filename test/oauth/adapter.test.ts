// The OAuth server's storage (src/oauth/adapter.ts) on a real database: bearer secrets stored
// only as hashes, an AccessToken saved becoming a team token (and a refresh renewing that same
// token), grants usable only while their team token lives, and revocations in both directions.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/core/authenticate.js';
import { generateTokenValue, hashTokenValue } from '../../src/auth/token-format.js';
import { updateTokenAccess, type AccessSettings } from '../../src/db/repositories/token-admin.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { insertTeam, upsertMember } from '../../src/db/repositories/teams.js';
import type { Database } from '../../src/db/tables.js';
import { databaseAdapter } from '../../src/oauth/adapter.js';
import { sweepExpired } from '../../src/db/repositories/oauth-records.js';
import { createSignIn, findSignIn } from '../../src/oauth/sign-ins.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

/** A value as the OAuth server issues it (src/oauth/token-values.ts). */
const value = () => generateTokenValue();
/** A value as it issued before its tokens took the tinf_ format: 43 base64url characters. */
const legacyValue = () => randomBytes(32).toString('base64url');
const READ_ONLY: AccessSettings = {
  name: 'Claude', expiresOn: null, acceptedBy: 'mcp', fullAccess: false, permissions: ['services:read'], serviceIds: null, serverIds: null,
  needsApproval: [],
};

describe('OAuth storage adapter', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  let Adapter: ReturnType<typeof databaseAdapter>;
  let teamId: string;
  let userId: string;

  beforeEach(async () => {
    database = await openTestDatabase(undefined, 'oauth');
    db = database.db.kysely;
    Adapter = databaseAdapter(db);
    teamId = await insertTeam(db, { name: 'Acme', plan: 'starter', timezone: 'UTC' });
    userId = await upsertMember(db, { teamId, email: 'owner@example.com', role: 'owner', passwordHash: null });
  });
  afterEach(async () => { await database.close(); });

  async function approvedGrant(kind: 'assistant' | 'cli' = 'assistant', settings = READ_ONLY): Promise<string> {
    const grantId = `grant_${value().slice(0, 10)}`;
    await new Adapter('Grant').upsert(grantId, { jti: grantId, accountId: userId, clientId: 'client-1', kind: 'Grant' });
    await createSignIn(db, {
      grantId, kind, teamId, userId, clientId: 'client-1', clientName: 'Claude <Desktop>', resource: 'http://host/mcp', settings,
    });
    return grantId;
  }

  it('stores a refresh token under the SHA-256 of its value and gives the value back only to whoever holds it', async () => {
    const refreshToken = value();
    const adapter = new Adapter('RefreshToken');
    await adapter.upsert(refreshToken, { jti: refreshToken, grantId: 'g1', clientId: 'client-1', kind: 'RefreshToken' }, 3600);
    const rows = await db.selectFrom('oauth_records').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(refreshToken);
    expect(rows[0]?.id).toBe(hashTokenValue(refreshToken));
    expect(await adapter.find(refreshToken)).toMatchObject({ jti: refreshToken, grantId: 'g1' });
    await adapter.consume(refreshToken);
    expect((await adapter.find(refreshToken))?.consumed).toBeGreaterThan(0);
  });

  it('makes the first access token of a sign-in a team token with the access chosen on the consent page', async () => {
    const grantId = await approvedGrant();
    const accessToken = value();
    await new Adapter('AccessToken').upsert(accessToken, { jti: accessToken, grantId, clientId: 'client-1', kind: 'AccessToken' });

    const principal = await authenticate(db, accessToken);
    expect(principal).toMatchObject({ source: 'assistant', acceptedBy: 'mcp', fullAccess: false, teamId, tokenName: 'Claude' });
    expect([...principal.permissions]).toEqual(['services:read']);
    const row = await db.selectFrom('api_tokens').selectAll().where('id', '=', principal.tokenId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ assistant_name: 'Claude <Desktop>', created_by_user_id: userId, token_hash: hashTokenValue(accessToken) });
    expect((await findSignIn(db, grantId))?.tokenId).toBe(principal.tokenId);
    expect(JSON.stringify(await db.selectFrom('oauth_records').selectAll().execute())).not.toContain(accessToken);
  });

  it('gives the same team token the new value on refresh: the old value stops, an edit made meanwhile carries over', async () => {
    const grantId = await approvedGrant();
    const first = value();
    const adapter = new Adapter('AccessToken');
    await adapter.upsert(first, { jti: first, grantId, clientId: 'client-1', kind: 'AccessToken' });
    const { tokenId } = await authenticate(db, first);
    await updateTokenAccess(db, tokenId, { ...READ_ONLY, permissions: ['services:read', 'servers:read'] });

    const second = value();
    await adapter.upsert(second, { jti: second, grantId, clientId: 'client-1', kind: 'AccessToken' });
    await expect(authenticate(db, first)).rejects.toMatchObject({ code: 'invalid_token', internalReason: 'unknown' });
    const renewed = await authenticate(db, second);
    expect(renewed.tokenId).toBe(tokenId);
    expect([...renewed.permissions].sort()).toEqual(['servers:read', 'services:read']);
    expect(await db.selectFrom('api_tokens').select('id').execute()).toHaveLength(1);
    expect(await adapter.find(first)).toBeUndefined();
  });

  it('still accepts an access token when it was issued before the tinf_ format (43 base64url characters)', async () => {
    const grantId = await approvedGrant();
    const issuedEarlier = legacyValue();
    await new Adapter('AccessToken').upsert(issuedEarlier, { jti: issuedEarlier, grantId, clientId: 'client-1', kind: 'AccessToken' });
    expect(await authenticate(db, issuedEarlier)).toMatchObject({ source: 'assistant' });
  });

  it('gives the command line full access through the REST API only', async () => {
    const grantId = await approvedGrant('cli', { ...READ_ONLY, name: 'Command-line sign-in', acceptedBy: 'api', fullAccess: true, permissions: [] });
    const accessToken = value();
    await new Adapter('AccessToken').upsert(accessToken, { jti: accessToken, grantId, clientId: 'teaminfra-cli', kind: 'AccessToken' });
    expect(await authenticate(db, accessToken)).toMatchObject({ source: 'cli', acceptedBy: 'api', fullAccess: true });
  });

  it('refuses an access token for a grant that no person approved', async () => {
    const accessToken = value();
    await expect(new Adapter('AccessToken').upsert(accessToken, { jti: accessToken, grantId: 'unknown', kind: 'AccessToken' }))
      .rejects.toThrow(/sign-in/);
    expect(await db.selectFrom('api_tokens').select('id').execute()).toEqual([]);
  });

  it('finds a grant only while its team token is neither revoked nor expired', async () => {
    const grants = new Adapter('Grant');
    const live = await approvedGrant();
    const expired = await approvedGrant('assistant', { ...READ_ONLY, expiresOn: '2020-01-01' });
    for (const grantId of [live, expired]) {
      const accessToken = value();
      await new Adapter('AccessToken').upsert(accessToken, { jti: accessToken, grantId, kind: 'AccessToken' });
    }
    expect(await grants.find(live)).toMatchObject({ accountId: userId });
    expect(await grants.find(expired)).toBeUndefined();
    await revokeToken(db, (await findSignIn(db, live))!.tokenId!);
    expect(await grants.find(live)).toBeUndefined();
  });

  it('ends the refresh tokens of a sign-in when its team token is revoked on the panel', async () => {
    const grantId = await approvedGrant();
    const accessToken = value();
    const refreshToken = value();
    await new Adapter('AccessToken').upsert(accessToken, { jti: accessToken, grantId, kind: 'AccessToken' });
    await new Adapter('RefreshToken').upsert(refreshToken, { jti: refreshToken, grantId, kind: 'RefreshToken' }, 3600);
    await revokeToken(db, (await authenticate(db, accessToken)).tokenId);
    expect(await new Adapter('RefreshToken').find(refreshToken)).toBeUndefined();
  });

  it('revokes the team token when the OAuth server destroys its access token or revokes its grant', async () => {
    const byValue = await approvedGrant();
    const byGrant = await approvedGrant();
    const [first, second] = [value(), value()];
    const adapter = new Adapter('AccessToken');
    await adapter.upsert(first, { jti: first, grantId: byValue, kind: 'AccessToken' });
    await adapter.upsert(second, { jti: second, grantId: byGrant, kind: 'AccessToken' });
    await adapter.destroy(first);
    await adapter.revokeByGrantId(byGrant);
    await expect(authenticate(db, first)).rejects.toMatchObject({ internalReason: 'revoked' });
    await expect(authenticate(db, second)).rejects.toMatchObject({ internalReason: 'revoked' });
  });

  it('forgets an approval whose code was never exchanged, with its grant, after the waiting time', async () => {
    const grantId = await approvedGrant();
    await sweepExpired(db, new Date(Date.now() + 16 * 60_000));
    expect(await findSignIn(db, grantId)).toBeUndefined();
    expect(await db.selectFrom('oauth_records').select('kind').where('grant_id', '=', grantId).execute()).toEqual([]);
  });
});

describe('authenticate() and the shapes of a bearer', () => {
  it('refuses a value that is neither a tinf_ token nor an OAuth access token before any lookup', async () => {
    const database = await openTestDatabase(undefined, 'shapes');
    try {
      for (const bearer of ['abc', 'x'.repeat(44), `${'A'.repeat(42)}!`, 'tinf_' + 'A'.repeat(49)]) {
        await expect(authenticate(database.db.kysely, bearer)).rejects.toMatchObject({ code: 'invalid_token', internalReason: 'malformed' });
      }
      await expect(authenticate(database.db.kysely, value())).rejects.toMatchObject({ internalReason: 'unknown' });
      await expect(authenticate(database.db.kysely, legacyValue())).rejects.toMatchObject({ internalReason: 'unknown' });
    } finally {
      await database.close();
    }
  });
});
