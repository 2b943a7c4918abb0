// Restore drills (schema.sql, team_restore_drills and restore_drills; src/offsite/restore-drills):
// each team's weekly slot, taken by one node with a compare-and-set; the drills a slot (or the
// operator's command) queues, one per service; and the lease one node runs a drill under.
import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { Database, RestoreDrillsTable } from '../tables.js';

export type RestoreDrillRow = RestoreDrillsTable;

/** What a drill was queued for, or why a service has none: it has no backup stored off-site, or one of its drills is already under way. */
export type QueuedDrill =
  | { serviceId: string; serviceName: string; drill: RestoreDrillRow }
  | { serviceId: string; serviceName: string; drill: null; why: 'no_offsite_backup' | 'under_way' };

/** Teams with a current destination and no drill slot yet get one, `firstAt`. */
export async function writeMissingDrillSlots(db: Kysely<Database>, firstAt: string, at: string): Promise<void> {
  const teams = await db.selectFrom('backup_destinations as d').leftJoin('team_restore_drills as r', 'r.team_id', 'd.team_id')
    .select('d.team_id').where('d.replaced_at', 'is', null).where('r.team_id', 'is', null).limit(100).execute();
  for (const { team_id } of teams) {
    await db.insertInto('team_restore_drills').values({ team_id, next_run_at: firstAt, updated_at: at })
      .onConflict((conflict) => conflict.column('team_id').doNothing()).execute();
  }
}

export async function dueDrillSlots(db: Kysely<Database>, now: string, limit: number) {
  return db.selectFrom('team_restore_drills').selectAll().where('next_run_at', '<=', now).orderBy('next_run_at').limit(limit).execute();
}

/** Moves a team's slot from `expected` to `next`; true for the one caller whose update changed the row. */
export async function takeDrillSlot(db: Kysely<Database>, teamId: string, expected: string, next: string, at: string): Promise<boolean> {
  const result = await db.updateTable('team_restore_drills').set({ next_run_at: next, updated_at: at })
    .where('team_id', '=', teamId).where('next_run_at', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Queues a drill of each ERP service of the team (not a copy, not deleted, not on a lost server)
 * with its newest completed backup whose off-site copy is stored; `holder`: the drills are taken
 * at once under that lease (the operator's command runs them itself).
 */
export async function queueDrillsOfTeam(
  db: Kysely<Database>, teamId: string, at: string, holder?: { owner: string; until: string },
): Promise<QueuedDrill[]> {
  const services = await db.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
    .select(['s.id', 's.name']).where('s.team_id', '=', teamId).where('s.parent_id', 'is', null).where('s.deleted_at', 'is', null)
    .where('v.state', '!=', 'lost').orderBy('s.id').execute();
  const queued: QueuedDrill[] = [];
  for (const service of services) {
    const named = { serviceId: service.id, serviceName: service.name };
    const underWay = await db.selectFrom('restore_drills').select('id').where('service_id', '=', service.id)
      .where('state', 'in', ['queued', 'running']).executeTakeFirst();
    if (underWay) {
      queued.push({ ...named, drill: null, why: 'under_way' });
      continue;
    }
    const newest = await db.selectFrom('backups as b').innerJoin('backup_offsite_copies as c', 'c.backup_id', 'b.id')
      .select('b.id').where('b.service_id', '=', service.id).where('b.state', '=', 'completed').where('c.state', '=', 'stored')
      .orderBy('b.completed_at', 'desc').orderBy('b.id', 'desc').limit(1).executeTakeFirst();
    if (!newest) {
      queued.push({ ...named, drill: null, why: 'no_offsite_backup' });
      continue;
    }
    const drill: RestoreDrillRow = {
      id: newId('drl'), team_id: teamId, service_id: service.id, backup_id: newest.id, throwaway_id: newId('svc'),
      state: holder ? 'running' : 'queued', reason: null, attempts: holder ? 1 : 0,
      lease_owner: holder?.owner ?? null, lease_expires_at: holder?.until ?? null, created_at: at, ended_at: null,
    };
    await db.insertInto('restore_drills').values(drill).execute();
    queued.push({ ...named, drill });
  }
  return queued;
}

/** Drills not ended, oldest first, with their leases (the caller judges whether a held one is takeable). */
export async function drillsNotEnded(db: Kysely<Database>, limit: number): Promise<RestoreDrillRow[]> {
  return db.selectFrom('restore_drills').selectAll().where('state', 'in', ['queued', 'running']).orderBy('created_at').limit(limit).execute();
}

/** Takes a drill's lease if nobody took it since it was read as `drill`; counts the attempt. True when taken. */
export async function takeDrillLease(db: Kysely<Database>, drill: RestoreDrillRow, owner: string, until: string): Promise<boolean> {
  let query = db.updateTable('restore_drills').set({ state: 'running', lease_owner: owner, lease_expires_at: until, attempts: drill.attempts + 1 })
    .where('id', '=', drill.id).where('state', 'in', ['queued', 'running']).where('attempts', '=', drill.attempts);
  query = drill.lease_owner === null ? query.where('lease_owner', 'is', null) : query.where('lease_owner', '=', drill.lease_owner);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function renewDrillLease(db: Kysely<Database>, drillId: string, owner: string, until: string): Promise<boolean> {
  const result = await db.updateTable('restore_drills').set({ lease_expires_at: until })
    .where('id', '=', drillId).where('lease_owner', '=', owner).where('state', '=', 'running').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The service's newest ended drill, for its page. */
export async function lastEndedDrillOf(db: Kysely<Database>, serviceId: string) {
  return db.selectFrom('restore_drills').select(['backup_id', 'state', 'reason', 'ended_at']).where('service_id', '=', serviceId)
    .where('state', 'in', ['verified', 'failed']).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
}
