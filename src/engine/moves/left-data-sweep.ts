// Removes what moves left on the servers they left (src/engine/actions/move.ts): the stopped
// service and its data on its old server once the rollback window ended (or the service was
// deleted), and what a rollback left on the server it rolled back from when the rollback could
// not remove it itself. Run by the engine on an interval and once at start; any node may run it
// (the removal is idempotent). Never on the server the service is on now (it came back there),
// never while an operation works on the service, and nothing is asked of a lost server's engine.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import { markRemoved, movesWithDataToRemove } from '../../db/repositories/service-moves.js';
import type { ServiceDriver } from '../driver.js';
import { loadServerSpec, serviceSpecQuery, specOf } from '../service-spec.js';

/** The moves whose left data is gone now (removed, or nothing left to remove). */
export async function removeLeftMoveData(
  db: Kysely<Database>, driver: ServiceDriver, now: string, onError: (error: unknown, context: string) => void,
): Promise<string[]> {
  const done: string[] = [];
  for (const move of await movesWithDataToRemove(db, now)) {
    const leftServerId = move.state === 'rolled_back' ? move.to_server_id : move.from_server_id;
    try {
      const left = await db.selectFrom('servers').select('state').where('id', '=', leftServerId).executeTakeFirst();
      if (leftServerId !== move.current_server_id && left && left.state !== 'lost') {
        // Also a deleted service's (its row stays, deleted_at set).
        const row = await serviceSpecQuery(db).where('s.id', '=', move.service_id).executeTakeFirstOrThrow();
        await driver.removeFromServer!({ ...specOf(row), server: await loadServerSpec(db, leftServerId) });
      }
      await markRemoved(db, move.id, nowIso());
      done.push(move.id);
    } catch (error) {
      onError(error, `removing what the move ${move.id} of service ${move.service_id} left on server ${leftServerId}`);
    }
  }
  return done;
}
