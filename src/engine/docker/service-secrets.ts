// The secrets an app definition declares (x-teaminfra secrets: DB_PASSWORD, ADMIN_PASSWORD),
// generated once per service when it is created, kept sealed in service_secrets (bound to the
// service and the name, so a sealed value moved to another row does not open) and opened only
// to fill in a container's environment. URL-safe, since they end up in URIs (postgresql://).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import type { SecretBox } from '../../secrets/secret-box.js';

function contextOf(serviceId: string, name: string): string {
  return `service-secret:${serviceId}:${name}`;
}

/** 32 characters of base64url: 192 bits, nothing a URI, a shell or a config file would mangle. */
export function generateSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** Makes the secrets the service lacks (a create resumed after a crash keeps the ones it made) and returns them all, opened. */
export async function ensureServiceSecrets(
  db: Kysely<Database>, secrets: SecretBox, serviceId: string, names: readonly string[],
): Promise<Record<string, string>> {
  for (const name of names) {
    await db.insertInto('service_secrets')
      .values({ service_id: serviceId, name, sealed: secrets.seal(generateSecret(), contextOf(serviceId, name)), created_at: nowIso() })
      .onConflict((conflict) => conflict.columns(['service_id', 'name']).doNothing()).execute();
  }
  return readServiceSecrets(db, secrets, serviceId);
}

export async function readServiceSecrets(db: Kysely<Database>, secrets: SecretBox, serviceId: string): Promise<Record<string, string>> {
  const rows = await db.selectFrom('service_secrets').select(['name', 'sealed']).where('service_id', '=', serviceId).execute();
  return Object.fromEntries(rows.map((row) => [row.name, secrets.reveal(row.sealed, contextOf(serviceId, row.name))]));
}

export async function deleteServiceSecrets(db: Kysely<Database>, serviceId: string): Promise<void> {
  await db.deleteFrom('service_secrets').where('service_id', '=', serviceId).execute();
}

/** At start (src/secrets/seal-stored-secrets.ts): each service secret sealed with a previous key, sealed with the current one. */
export async function resealServiceSecrets(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  const rows = await db.selectFrom('service_secrets').select(['service_id', 'name', 'sealed']).execute();
  let changed = 0;
  for (const row of rows) {
    const sealed = secrets.resealed(row.sealed, contextOf(row.service_id, row.name));
    if (sealed === undefined) continue;
    await db.updateTable('service_secrets').set({ sealed })
      .where('service_id', '=', row.service_id).where('name', '=', row.name).where('sealed', '=', row.sealed).execute();
    changed += 1;
  }
  return changed;
}
