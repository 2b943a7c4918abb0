// When restore drills run: each team with an off-site destination has a slot every week
// (DRILL_EVERY_MS), its first a week after the scheduler first saw the destination, so that the
// first backups have reached the store. The backup scheduler calls queueDueDrills on each tick
// (scheduler.ts): a team's slot is taken by one compare-and-set on team_restore_drills.next_run_at
// in the transaction that queues its drills, so one node queues them whatever the number of nodes,
// and slots missed while every node was down collapse into one. The drill runner runs them.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { dueDrillSlots, queueDrillsOfTeam, takeDrillSlot, writeMissingDrillSlots } from '../../db/repositories/restore-drills.js';
import { inWriteTransaction } from '../../engine/write-transaction.js';

export const DRILL_EVERY_MS = 7 * 24 * 3_600_000;
const BATCH = 100;

/** Queues the drills of every team whose slot is due at `now`; the ids of the drills queued. */
export async function queueDueDrills(db: Kysely<Database>, now: number): Promise<string[]> {
  const at = new Date(now).toISOString();
  await writeMissingDrillSlots(db, new Date(now + DRILL_EVERY_MS).toISOString(), at);
  const queued: string[] = [];
  for (const slot of await dueDrillSlots(db, at, BATCH)) {
    // The next slot is a whole week after now, not after the missed one.
    const next = new Date(now + DRILL_EVERY_MS).toISOString();
    await inWriteTransaction(db, async (trx) => {
      if (!(await takeDrillSlot(trx, slot.team_id, slot.next_run_at, next, at))) return;
      for (const entry of await queueDrillsOfTeam(trx, slot.team_id, at)) if (entry.drill) queued.push(entry.drill.id);
    });
  }
  return queued;
}
