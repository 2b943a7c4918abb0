// At every start of `serve`, before anything is served: checks that this process has the key the
// database's secrets (webhook secrets, the sign-in server's keys, Docker copies' mail passwords, app services' generated secrets, outgoing mail relays' passwords,
// image registries' passwords, off-site backup destinations' secret keys and teams' backup keys,
// server proxies' ACME account keys and operator certificates' keys)
// are sealed with (a node given another key refuses to start, rather than fail at its first
// delivery), then seals with the current key every secret still in clear (kept so by
// an earlier version) or sealed with a previous key (a key change). On SQLite the replaced values
// are overwritten (secure_delete) and the file rewritten (VACUUM), so no old copy stays in it.
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/tables.js';
import { sealWebhookSecrets } from '../db/repositories/webhooks.js';
import { sealServerSecrets } from '../oauth/server-secrets.js';
import { sealDockerMailPasswords } from '../engine/docker/docker-state.js';
import { resealServiceSecrets } from '../engine/docker/service-secrets.js';
import { resealRelayPasswords } from '../mail/outgoing-relay.js';
import { resealRegistryPasswords } from '../engine/docker/registry-credentials.js';
import { resealDestinationSecrets } from '../offsite/destinations.js';
import { resealProxySecrets } from '../engine/domains/proxy-secrets.js';
import { keyIdOf, UnsealError, type SecretBox } from './secret-box.js';

/** This process's key is not the one the database's secrets are sealed with. */
export class SecretsKeyMismatch extends Error {}

const CHECK_ID = 'default';
const CHECK_CONTEXT = 'secrets-key-check';
const CHECK_TEXT = 'teaminfra secrets key check';

export async function sealStoredSecrets(db: Db, box: SecretBox): Promise<{ resealed: number }> {
  const check = await checkSecretsKey(db.kysely, box);
  const secureDelete = db.sqlite?.pragma('secure_delete', { simple: true });
  db.sqlite?.pragma('secure_delete = ON');
  try {
    const resealed = (await sealWebhookSecrets(db.kysely, box)) + (await sealServerSecrets(db.kysely, box)) +
      (await sealDockerMailPasswords(db.kysely, box)) + (await resealServiceSecrets(db.kysely, box)) +
      (await resealRelayPasswords(db.kysely, box)) + (await resealRegistryPasswords(db.kysely, box)) +
      (await resealDestinationSecrets(db.kysely, box)) + (await resealProxySecrets(db.kysely, box));
    // Last: until every secret is sealed anew, the check still names the key they were sealed with.
    if (!box.isCurrent(check)) {
      await db.kysely.updateTable('secrets_key_check').set({ sealed: box.seal(CHECK_TEXT, CHECK_CONTEXT) })
        .where('id', '=', CHECK_ID).where('sealed', '=', check).execute();
    }
    if (resealed > 0 && db.sqlite) {
      db.sqlite.exec('VACUUM');
      db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    }
    return { resealed };
  } finally {
    db.sqlite?.pragma(`secure_delete = ${secureDelete === 2 ? 'FAST' : Number(secureDelete)}`);
  }
}

/**
 * The stored check value, once it is known to open with one of this process's keys (the first
 * process to ask stores it, sealed with its key). Throws SecretsKeyMismatch otherwise.
 */
export async function checkSecretsKey(db: Kysely<Database>, box: SecretBox): Promise<string> {
  // Insert-if-absent, then read: when two nodes start at once, both check the one that won.
  await db.insertInto('secrets_key_check').values({ id: CHECK_ID, sealed: box.seal(CHECK_TEXT, CHECK_CONTEXT) })
    .onConflict((conflict) => conflict.column('id').doNothing()).execute();
  const { sealed } = await db.selectFrom('secrets_key_check').select('sealed').where('id', '=', CHECK_ID).executeTakeFirstOrThrow();
  try {
    if (box.reveal(sealed, CHECK_CONTEXT) === CHECK_TEXT) return sealed;
  } catch (error) {
    if (!(error instanceof UnsealError)) throw error;
  }
  const current = box.currentKey;
  throw new SecretsKeyMismatch(`The secrets in this database are sealed with another key (key id ${keyIdOf(sealed) ?? 'unknown'}) ` +
    `than this process's (key id ${current.id}, from ${current.source}). Every process using one database needs the same key: ` +
    'set TEAMINFRA_SECRETS_KEY to the key the others use (where it was made, the content of DATA_DIR/secrets.key); ' +
    'to change keys, give the old one in TEAMINFRA_SECRETS_KEY_PREVIOUS. See "Secrets at rest" in docs/secrets.md.');
}
