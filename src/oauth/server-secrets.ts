// The authorization server's own secrets: the keys that sign its cookies (an interaction begun on
// one node must be resumable on another, and after a restart) and its signing key (published at
// its jwks_uri; nothing is signed with it today, since we issue no ID tokens or JWT access tokens,
// but the library refuses to start without one and would otherwise use its public demo keys).
// Made once per database and shared by every node.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { findRecord } from './records.js';

const KIND = 'ServerSecrets';
const ID = 'default';

export interface ServerSecrets {
  cookieKeys: string[];
  jwks: { keys: Record<string, unknown>[] };
}

function freshSecrets(): ServerSecrets {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    cookieKeys: [randomBytes(32).toString('base64url')],
    jwks: { keys: [{ ...jwk, use: 'sig', alg: 'ES256', kid: randomBytes(8).toString('hex') }] },
  };
}

export async function loadServerSecrets(db: Kysely<Database>): Promise<ServerSecrets> {
  // Insert-if-absent, then read: when two nodes start at once, both read the one that won.
  await db.insertInto('oauth_records').values({
    kind: KIND, id: ID, payload: JSON.stringify(freshSecrets()), grant_id: null, user_code: null, uid: null,
    token_id: null, expires_at: null, consumed_at: null,
  }).onConflict((conflict) => conflict.columns(['kind', 'id']).doNothing()).execute();
  const record = await findRecord(db, KIND, { column: 'id', value: ID });
  if (!record) throw new Error('The OAuth server secrets could not be stored.');
  return record.payload as unknown as ServerSecrets;
}
