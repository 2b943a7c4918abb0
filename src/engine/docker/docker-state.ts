// What the Docker driver keeps in the control plane's database about a service (schema.sql,
// docker_services): the volume that holds its data now, so that a restore's swap is one row
// update, a copy's mail-catcher login for the containers it creates later, and the digests of
// the images an app's service was made with. The mail password is stored sealed (src/secrets),
// bound to its service: a copy of the database is not enough to file mail under the copy's name.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { dataVolumeName } from './labels.js';

export interface DockerServiceState {
  volume: string;
  mail: { username: string; password: string } | null;
}

/** What a copy's mail password is sealed with: its service, so a sealed password moved to another row does not open. */
export function mailPasswordContext(serviceId: string): string {
  return `docker-service-mail:${serviceId}`;
}

export async function readDockerState(db: Kysely<Database>, secrets: SecretBox, serviceId: string): Promise<DockerServiceState> {
  const row = await db.selectFrom('docker_services').select(['volume', 'mail_username', 'mail_password'])
    .where('service_id', '=', serviceId).executeTakeFirst();
  if (!row) return { volume: dataVolumeName(serviceId), mail: null };
  const password = row.mail_password === null ? '' : secrets.reveal(row.mail_password, mailPasswordContext(serviceId));
  return { volume: row.volume, mail: row.mail_username ? { username: row.mail_username, password } : null };
}

export async function writeDockerState(
  db: Kysely<Database>, secrets: SecretBox, serviceId: string, change: Partial<DockerServiceState>,
): Promise<void> {
  const current = await readDockerState(db, secrets, serviceId);
  const next = { ...current, ...change };
  const values = {
    volume: next.volume, mail_username: next.mail?.username ?? null,
    mail_password: next.mail ? secrets.seal(next.mail.password, mailPasswordContext(serviceId)) : null, updated_at: nowIso(),
  };
  await db.insertInto('docker_services').values({ service_id: serviceId, ...values })
    .onConflict((conflict) => conflict.column('service_id').doUpdateSet(values)).execute();
}

/**
 * Seals with the current key every copy's mail password in clear (kept so by an earlier
 * version) or sealed with a previous key; at start (src/secrets/seal-stored-secrets.ts).
 * Returns how many rows changed.
 */
export async function sealDockerMailPasswords(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  const rows = await db.selectFrom('docker_services').select(['service_id', 'mail_password']).where('mail_password', 'is not', null).execute();
  let changed = 0;
  for (const row of rows) {
    const sealed = secrets.resealed(row.mail_password as string, mailPasswordContext(row.service_id));
    if (sealed === undefined) continue;
    // Only over the value read: new credentials written meanwhile by another node are kept.
    await db.updateTable('docker_services').set({ mail_password: sealed })
      .where('service_id', '=', row.service_id).where('mail_password', '=', row.mail_password).execute();
    changed += 1;
  }
  return changed;
}

/**
 * The digests an app's service was made with: each image its definition names to the name of
 * the exact image (`repository@sha256:...`); see service-images.ts. Empty for none recorded.
 */
export async function readImageDigests(db: Kysely<Database>, serviceId: string): Promise<Record<string, string>> {
  const row = await db.selectFrom('docker_services').select('image_digests').where('service_id', '=', serviceId).executeTakeFirst();
  return row?.image_digests ? JSON.parse(row.image_digests) as Record<string, string> : {};
}

export async function writeImageDigests(db: Kysely<Database>, serviceId: string, digests: Record<string, string>): Promise<void> {
  const values = { image_digests: Object.keys(digests).length > 0 ? JSON.stringify(digests) : null, updated_at: nowIso() };
  await db.insertInto('docker_services').values({ service_id: serviceId, volume: dataVolumeName(serviceId), ...values })
    .onConflict((conflict) => conflict.column('service_id').doUpdateSet(values)).execute();
}
