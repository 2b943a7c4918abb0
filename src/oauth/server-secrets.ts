// The authorization server's own secrets: the keys that sign its cookies (an interaction begun on
// one node must be resumable on another, and after a restart) and its signing key (published at
// its jwks_uri; nothing is signed with it today, since we issue no ID tokens or JWT access tokens,
// but the library refuses to start without one and would otherwise use its public demo keys).
// Made once per database and shared by every node; stored sealed (src/secrets), so a copy of the
// database does not hold them.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { findRecord } from '../db/repositories/oauth-records.js';

const KIND = 'ServerSecrets';
const ID = 'default';
const CONTEXT = 'oauth:ServerSecrets';

export interface ServerSecrets {
  cookieKeys: string[];
  jwks: { keys: Record<string, unknown>[] };
}

/** The record's payload: `sealed`; or, as an earlier version kept it, the secrets in clear. */
type StoredSecrets = { sealed: string } | ServerSecrets;

function freshSecrets(): ServerSecrets {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    cookieKeys: [randomBytes(32).toString('base64url')],
    jwks: { keys: [{ ...jwk, use: 'sig', alg: 'ES256', kid: randomBytes(8).toString('hex') }] },
  };
}

const sealedForm = (box: SecretBox, secrets: ServerSecrets): StoredSecrets => ({ sealed: box.seal(JSON.stringify(secrets), CONTEXT) });

function revealed(box: SecretBox, stored: StoredSecrets): ServerSecrets {
  return 'sealed' in stored ? JSON.parse(box.reveal(stored.sealed, CONTEXT)) as ServerSecrets : stored;
}

export async function loadServerSecrets(db: Kysely<Database>, box: SecretBox): Promise<ServerSecrets> {
  // Insert-if-absent, then read: when two nodes start at once, both read the one that won.
  await db.insertInto('oauth_records').values({
    kind: KIND, id: ID, payload: JSON.stringify(sealedForm(box, freshSecrets())), grant_id: null, user_code: null, uid: null,
    token_id: null, expires_at: null, consumed_at: null,
  }).onConflict((conflict) => conflict.columns(['kind', 'id']).doNothing()).execute();
  const record = await findRecord(db, KIND, { column: 'id', value: ID });
  if (!record) throw new Error('The OAuth server secrets could not be stored.');
  return revealed(box, record.payload as unknown as StoredSecrets);
}

/** Seals the record with the current key if it is in clear or sealed with a previous key; at start. Returns 1 if it changed. */
export async function sealServerSecrets(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const row = await db.selectFrom('oauth_records').select('payload').where('kind', '=', KIND).where('id', '=', ID).executeTakeFirst();
  if (!row) return 0;
  const stored = JSON.parse(row.payload) as StoredSecrets;
  if ('sealed' in stored && box.isCurrent(stored.sealed)) return 0;
  await db.updateTable('oauth_records').set({ payload: JSON.stringify(sealedForm(box, revealed(box, stored))) })
    .where('kind', '=', KIND).where('id', '=', ID).where('payload', '=', row.payload).execute();
  return 1;
}
