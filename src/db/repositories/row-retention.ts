// The batch deletes of row retention (src/engine/row-retention/prune-rows.ts): each takes at
// most `limit` rows, oldest first, read as a range of an index, and answers how many it deleted.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';

export async function deleteAuditBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const result = await db.deleteFrom('audit_log')
    .where('id', 'in', db.selectFrom('audit_log').select('id').where('at', '<', cutoff).orderBy('at').limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deliveries that ended (delivered, or failed for good) before the cutoff. */
export async function deleteEndedDeliveriesBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const ids = await db.selectFrom('webhook_deliveries').select('id')
    .where('state', 'in', ['delivered', 'failed']).where('updated_at', '<', cutoff).limit(limit).execute();
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('webhook_deliveries').where('id', 'in', ids.map((row) => row.id)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Events handed to webhooks before the cutoff that no delivery names any more. */
export async function deleteDispatchedEventsBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const ids = await db.selectFrom('events as e').select('e.id')
    .where('e.dispatched_at', '<', cutoff)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'))))
    .orderBy('e.dispatched_at').limit(limit).execute();
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('events').where('id', 'in', ids.map((row) => row.id)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Operations that finished before the cutoff, with their transitions: never the newest operation
 * of a service (what last happened to it stays readable), nor one a backup or decision names.
 */
export async function deleteFinishedOperationsBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const ids = await db.selectFrom('operations as o').select('o.id')
    // Only a succeeded or failed operation has finished_at: the range holds nothing in flight.
    .where('o.finished_at', '<', cutoff)
    .where((eb) => eb.or([
      eb('o.service_id', 'is', null),
      eb.exists(eb.selectFrom('operations as later').select('later.id')
        .whereRef('later.team_id', '=', 'o.team_id').whereRef('later.service_id', '=', 'o.service_id').whereRef('later.id', '>', 'o.id')),
    ]))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('backups as b').select('b.id').whereRef('b.operation_id', '=', 'o.id'))))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('decisions as d').select('d.id').whereRef('d.operation_id', '=', 'o.id'))))
    .orderBy('o.finished_at').limit(limit).execute();
  if (ids.length === 0) return 0;
  const operationIds = ids.map((row) => row.id);
  await db.deleteFrom('operation_transitions').where('operation_id', 'in', operationIds).execute();
  const result = await db.deleteFrom('operations').where('id', 'in', operationIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}
