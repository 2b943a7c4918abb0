// A team of many ERP services in a few statements (insertService writes one at a time): rows in
// batches of 500, then their names' pieces, as schema.sql writes them for rows inserted by hand.
import type { Insertable, Kysely } from 'kysely';
import { newId, nowIso } from '../../src/db/ids.js';
import { indexServiceNames } from '../../src/db/repositories/service-name-search.js';
import type { Database } from '../../src/db/tables.js';

/** Inserts one stopped, top-level service per name; returns their ids, in the names' order, which is id order. */
export async function insertManyServices(db: Kysely<Database>, teamId: string, serverId: string, names: readonly string[]): Promise<string[]> {
  const now = nowIso();
  // Sorted: newId keeps only 36 ids of one millisecond in order, and a team's order is by id.
  const ids = names.map(() => newId('svc')).sort();
  const rows: Insertable<Database['erp_services']>[] = names.map((name, i) => ({
    id: ids[i] as string, team_id: teamId, server_id: serverId, parent_id: null, name, state: 'stopped', revision: 1, port: null, pid: null,
    outgoing_smtp: null, mail_username: null, mail_password_hash: null, state_reason: null, created_at: now, updated_at: now, deleted_at: null,
    published_host: null, app: null,
  }));
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < rows.length; start += 500) await trx.insertInto('erp_services').values(rows.slice(start, start + 500)).execute();
    await indexServiceNames(trx, rows.map((row) => row.id));
  });
  return rows.map((row) => row.id);
}
