// What services of a multi-container app (tryton) cannot do yet: backups, restores and copies
// treat a service's data as the demo's one volume, which would be a wrong result for
// an app whose data is a PostgreSQL database. Refused when asked, with a sentence, before any
// row changes (the Docker driver refuses them too, for an operation queued before this check).
import type { Kysely } from 'kysely';
import { AppError } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';

export type NotYetForApps = 'Backups' | 'Restores' | 'Copies';

export async function refuseIfAppCannot(trx: Kysely<Database>, serviceId: string, what: NotYetForApps): Promise<void> {
  const row = await trx.selectFrom('erp_services').select('app').where('id', '=', serviceId).executeTakeFirst();
  const app = row?.app ?? null;
  if (app !== null && app !== 'demo') throw new AppError('conflict', `${what} of services of the app ${app} are not supported yet.`);
}
