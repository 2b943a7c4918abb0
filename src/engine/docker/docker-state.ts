// What the Docker driver keeps in the control plane's database about a service (schema.sql,
// docker_services): the volume that holds its data now, so that a restore's swap is one row
// update, and a copy's mail-catcher login for the containers it creates later.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import { dataVolumeName } from './labels.js';

export interface DockerServiceState {
  volume: string;
  mail: { username: string; password: string } | null;
}

export async function readDockerState(db: Kysely<Database>, serviceId: string): Promise<DockerServiceState> {
  const row = await db.selectFrom('docker_services').select(['volume', 'mail_username', 'mail_password'])
    .where('service_id', '=', serviceId).executeTakeFirst();
  if (!row) return { volume: dataVolumeName(serviceId), mail: null };
  return { volume: row.volume, mail: row.mail_username ? { username: row.mail_username, password: row.mail_password ?? '' } : null };
}

export async function writeDockerState(db: Kysely<Database>, serviceId: string, change: Partial<DockerServiceState>): Promise<void> {
  const current = await readDockerState(db, serviceId);
  const next = { ...current, ...change };
  const values = {
    volume: next.volume, mail_username: next.mail?.username ?? null, mail_password: next.mail?.password ?? null, updated_at: nowIso(),
  };
  await db.insertInto('docker_services').values({ service_id: serviceId, ...values })
    .onConflict((conflict) => conflict.column('service_id').doUpdateSet(values)).execute();
}
