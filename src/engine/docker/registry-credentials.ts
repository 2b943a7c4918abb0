// The logins a Docker server's engine gives image registries (schema.sql, registry_credentials):
// set by the operator (teaminfra admin set-registry-credentials), one per server and registry,
// the password sealed with the secrets key and bound to its server and registry, so that a
// sealed password moved to another row does not open. Opened only for a pull (image-pull.ts).
import type { Kysely } from 'kysely';
import { nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';

export interface RegistryLogin { username: string; password: string }

function passwordContext(serverId: string, registry: string): string {
  return `registry-credentials:${serverId}:${registry}`;
}

/** Sets (or replaces) the login of `serverId` to `registry` (already a registryName()). Returns when it was set. */
export async function setRegistryCredentials(
  db: Kysely<Database>, secrets: SecretBox, serverId: string, registry: string, login: RegistryLogin,
): Promise<string> {
  const values = { username: login.username, password: secrets.seal(login.password, passwordContext(serverId, registry)), updated_at: nowIso() };
  await db.insertInto('registry_credentials').values({ server_id: serverId, registry, ...values })
    .onConflict((conflict) => conflict.columns(['server_id', 'registry']).doUpdateSet(values)).execute();
  return values.updated_at;
}

/** True when there was one to remove. */
export async function removeRegistryCredentials(db: Kysely<Database>, serverId: string, registry: string): Promise<boolean> {
  const removed = await db.deleteFrom('registry_credentials').where('server_id', '=', serverId).where('registry', '=', registry).executeTakeFirst();
  return Number(removed.numDeletedRows) > 0;
}

export async function findRegistryCredentials(
  db: Kysely<Database>, secrets: SecretBox, serverId: string, registry: string,
): Promise<RegistryLogin | null> {
  const row = await db.selectFrom('registry_credentials').select(['username', 'password'])
    .where('server_id', '=', serverId).where('registry', '=', registry).executeTakeFirst();
  return row ? { username: row.username, password: secrets.reveal(row.password, passwordContext(serverId, registry)) } : null;
}

/** Seals with the current key every password sealed with a previous one (or kept in clear); at start. Returns how many changed. */
export async function resealRegistryPasswords(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  const rows = await db.selectFrom('registry_credentials').select(['server_id', 'registry', 'password']).execute();
  let changed = 0;
  for (const row of rows) {
    const sealed = secrets.resealed(row.password, passwordContext(row.server_id, row.registry));
    if (sealed === undefined) continue;
    // Only over the value read: a password the operator set meanwhile is kept.
    await db.updateTable('registry_credentials').set({ password: sealed })
      .where('server_id', '=', row.server_id).where('registry', '=', row.registry).where('password', '=', row.password).execute();
    changed += 1;
  }
  return changed;
}
