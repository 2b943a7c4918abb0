// A sign-in: what a person approved in the panel for one OAuth grant. It holds the access they
// chose until the client exchanges its code; from then on that access lives in the team token
// (api_tokens) the sign-in issued, editable on the API Tokens page like any other, and the
// sign-in only links the grant to that token and remembers the resource (audience) it is for.
import type { Kysely } from 'kysely';
import type { AccessSettings } from '../db/repositories/token-admin.js';
import type { Database } from '../db/tables.js';
import { findRecord, linkRecordToToken, putRecord, SIGN_IN_KIND, type OAuthRecord } from '../db/repositories/oauth-records.js';

/** How long an approval waits for its code to be exchanged (the code itself lives 60 seconds). */
export const PENDING_SIGN_IN_SECONDS = 15 * 60;

export interface SignIn {
  grantId: string;
  /** assistant: authorization code flow, narrowed access, MCP only. cli: device flow, full access, REST API only. */
  kind: 'assistant' | 'cli';
  teamId: string;
  /** The person who approved; recorded as the token's creator. */
  userId: string;
  clientId: string;
  clientName: string;
  /** The resource indicator (RFC 8707) the token is issued for: its audience. */
  resource: string;
  settings: AccessSettings;
  tokenId: string | null;
}

type StoredSignIn = Omit<SignIn, 'grantId' | 'tokenId'>;

export async function createSignIn(db: Kysely<Database>, signIn: Omit<SignIn, 'tokenId'>): Promise<void> {
  const { grantId, ...stored } = signIn;
  await putRecord(db, { kind: SIGN_IN_KIND, id: grantId, grantId, payload: stored, expiresInSeconds: PENDING_SIGN_IN_SECONDS });
}

export async function findSignIn(db: Kysely<Database>, grantId: string): Promise<SignIn | undefined> {
  return signInOf(await findRecord(db, SIGN_IN_KIND, { column: 'id', value: grantId }));
}

export async function findSignInOfToken(db: Kysely<Database>, tokenId: string): Promise<SignIn | undefined> {
  return signInOf(await findRecord(db, SIGN_IN_KIND, { column: 'token_id', value: tokenId }));
}

/** The sign-in issued its token: it is kept as long as the token (no more pending expiry). */
export async function linkSignInToToken(db: Kysely<Database>, grantId: string, tokenId: string): Promise<void> {
  await linkRecordToToken(db, SIGN_IN_KIND, grantId, tokenId);
}

function signInOf(record: OAuthRecord | undefined): SignIn | undefined {
  if (!record) return undefined;
  return { ...(record.payload as unknown as StoredSignIn), grantId: record.id, tokenId: record.tokenId };
}
