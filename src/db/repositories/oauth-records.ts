// The oauth_records table: one row per record the authorization server keeps, and our own
// sign-in records (src/oauth/sign-ins.ts). Generic on purpose; what is hashed before it gets here
// is the adapter's decision (src/oauth/adapter.ts). No oidc-provider import: token revocation
// reaches this file from the hot path's neighbours (tokens.ts), and `teaminfra mcp` must not load
// the OAuth server.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';

export interface OAuthRecord {
  kind: string;
  id: string;
  payload: Record<string, unknown>;
  grantId: string | null;
  tokenId: string | null;
  expiresAt: string | null;
  consumedAt: string | null;
}

export interface NewRecord {
  kind: string;
  id: string;
  payload: Record<string, unknown>;
  grantId?: string | null;
  userCode?: string | null;
  uid?: string | null;
  /** Seconds from now; undefined: kept until deleted. */
  expiresInSeconds?: number | undefined;
}

const inSeconds = (seconds: number | undefined): string | null =>
  seconds === undefined || !Number.isFinite(seconds) ? null : new Date(Date.now() + seconds * 1000).toISOString();

/** Inserts or replaces a record. The team token a sign-in issued and a consumption survive a re-save. */
export async function putRecord(db: Kysely<Database>, record: NewRecord): Promise<void> {
  const values = {
    payload: JSON.stringify(record.payload),
    grant_id: record.grantId ?? null,
    user_code: record.userCode ?? null,
    uid: record.uid ?? null,
    expires_at: inSeconds(record.expiresInSeconds),
  };
  await db.insertInto('oauth_records')
    .values({ kind: record.kind, id: record.id, token_id: null, consumed_at: null, ...values })
    .onConflict((conflict) => conflict.columns(['kind', 'id']).doUpdateSet(values))
    .execute();
}

type Lookup = { column: 'id'; value: string } | { column: 'user_code' | 'uid' | 'token_id'; value: string };

/** The record, unless it has expired (expired rows are left for sweepExpired). */
export async function findRecord(db: Kysely<Database>, kind: string, lookup: Lookup): Promise<OAuthRecord | undefined> {
  const row = await db.selectFrom('oauth_records').selectAll().where('kind', '=', kind)
    .where(lookup.column, '=', lookup.value)
    .where((where) => where.or([where('expires_at', 'is', null), where('expires_at', '>', new Date().toISOString())]))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    kind: row.kind, id: row.id, payload: JSON.parse(row.payload) as Record<string, unknown>, grantId: row.grant_id,
    tokenId: row.token_id, expiresAt: row.expires_at, consumedAt: row.consumed_at,
  };
}

export async function consumeRecord(db: Kysely<Database>, kind: string, id: string): Promise<void> {
  await db.updateTable('oauth_records').set({ consumed_at: new Date().toISOString() })
    .where('kind', '=', kind).where('id', '=', id).execute();
}

export async function deleteRecord(db: Kysely<Database>, kind: string, id: string): Promise<void> {
  await db.deleteFrom('oauth_records').where('kind', '=', kind).where('id', '=', id).execute();
}

export async function deleteRecordsOfGrant(db: Kysely<Database>, kind: string, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_records').where('kind', '=', kind).where('grant_id', '=', grantId).execute();
}

/** Marks a record as belonging to a team token, and as kept until deleted. */
export async function linkRecordToToken(db: Kysely<Database>, kind: string, id: string, tokenId: string): Promise<void> {
  await db.updateTable('oauth_records').set({ token_id: tokenId, expires_at: null })
    .where('kind', '=', kind).where('id', '=', id).execute();
}

/** Keeps a record until deleted (a grant whose sign-in issued its token). */
export async function keepRecord(db: Kysely<Database>, kind: string, id: string): Promise<void> {
  await db.updateTable('oauth_records').set({ expires_at: null }).where('kind', '=', kind).where('id', '=', id).execute();
}

/** Deletes expired records. Cheap (indexed on expires_at); called now and then by the adapter. */
export async function sweepExpired(db: Kysely<Database>, now = new Date()): Promise<void> {
  await db.deleteFrom('oauth_records').where('expires_at', '<', now.toISOString()).execute();
}

/** The kind of our own sign-in records (src/oauth/sign-ins.ts), found here by the token they issued. */
export const SIGN_IN_KIND = 'TeamSignIn';

/** Kinds of records that belong to a grant and can mint or carry a value. */
const GRANT_RECORD_KINDS = ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode', 'Grant'] as const;

/**
 * Ends the OAuth side of a team token that a sign-in issued: its refresh tokens, codes and grant
 * are deleted, so nothing can mint another value for it. Called when the token is revoked
 * (tokens.ts), which is why it lives beside the table and not with the sign-ins above it.
 */
export async function endSignInOfToken(db: Kysely<Database>, tokenId: string): Promise<void> {
  const signIn = await findRecord(db, SIGN_IN_KIND, { column: 'token_id', value: tokenId });
  if (!signIn?.grantId) return;
  for (const kind of GRANT_RECORD_KINDS) await deleteRecordsOfGrant(db, kind, signIn.grantId);
}
