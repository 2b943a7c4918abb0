// The records of moves (schema.sql, service_moves): written at a move's switch, read by its
// rollback and by the sweep that removes what a move left on the server it left.
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../tables.js';

export type ServiceMoveRow = Selectable<Database['service_moves']>;

/** The service's last move whose old server still keeps it, if it switched to the server the service is on now. */
export async function findKeptMove(db: Kysely<Database>, serviceId: string, serverId: string): Promise<ServiceMoveRow | undefined> {
  return db.selectFrom('service_moves').selectAll().where('service_id', '=', serviceId).where('state', '=', 'kept')
    .where('to_server_id', '=', serverId).orderBy('switched_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
}

export async function findMoveOfOperation(db: Kysely<Database>, operationId: string): Promise<ServiceMoveRow | undefined> {
  return db.selectFrom('service_moves').selectAll().where('operation_id', '=', operationId).executeTakeFirst();
}

export async function insertMove(db: Kysely<Database>, row: Omit<ServiceMoveRow, 'state' | 'removed_at'>): Promise<void> {
  await db.insertInto('service_moves').values({ ...row, state: 'kept', removed_at: null }).execute();
}

/**
 * What a service that just switched to `serverId` had left there (it came back): the data it
 * left is now the data it runs on, so no sweep may remove it.
 */
export async function forgetLeftOn(db: Kysely<Database>, serviceId: string, serverId: string, at: string): Promise<void> {
  await db.updateTable('service_moves').set({ state: 'removed', removed_at: at }).where('service_id', '=', serviceId)
    .where((eb) => eb.or([
      eb.and([eb('state', '=', 'kept'), eb('from_server_id', '=', serverId)]),
      eb.and([eb('state', '=', 'rolled_back'), eb('to_server_id', '=', serverId)]),
    ])).execute();
}

export async function markRolledBack(db: Kysely<Database>, moveId: string): Promise<void> {
  await db.updateTable('service_moves').set({ state: 'rolled_back' }).where('id', '=', moveId).where('state', '=', 'kept').execute();
}

/**
 * Moves whose left server still holds something to remove: kept past their window (or their
 * service deleted), and rolled back (the server the rollback left). Never a service an
 * operation is working on.
 */
export async function movesWithDataToRemove(db: Kysely<Database>, now: string): Promise<(ServiceMoveRow & { current_server_id: string })[]> {
  return db.selectFrom('service_moves as m').innerJoin('erp_services as s', 's.id', 'm.service_id')
    .selectAll('m').select('s.server_id as current_server_id')
    .where((eb) => eb.or([
      eb('m.state', '=', 'rolled_back'),
      eb.and([eb('m.state', '=', 'kept'), eb.or([eb('m.rollback_until', '<=', now), eb('s.deleted_at', 'is not', null)])]),
    ]))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('operations as o').select('o.id')
      .whereRef('o.service_id', '=', 'm.service_id').where('o.state', 'in', ['queued', 'running']))))
    .orderBy('m.switched_at').execute();
}

export async function markRemoved(db: Kysely<Database>, moveId: string, at: string): Promise<void> {
  await db.updateTable('service_moves').set({ state: 'removed', removed_at: at }).where('id', '=', moveId).where('state', '<>', 'removed').execute();
}
