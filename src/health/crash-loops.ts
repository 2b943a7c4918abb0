// Crash loops: the engine's restart count of a service (ServiceDriver.restartCount), read on each
// pass; each increase is remembered with its time for CRASH_LOOP_WINDOW_MS. CRASH_LOOP_RESTARTS of
// them within the window start a crash loop: service.crash_loop, an incident, and, when a start,
// redeploy or restore of the service ended within WATCH_AFTER_OPERATION_MS before, a note in that
// operation's result (its deploy "succeeded", then crash-looped). It ends once the window passes
// with no restart: service.recovered. A count that went down (containers replaced) is a new base.
import type { Kysely } from 'kysely';
import { addToOperationResult, saveHealthChecks, type WatchedService } from '../db/repositories/service-health.js';
import type { Database } from '../db/tables.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import { writeServiceHealthEvent } from './health-events.js';
import { CRASH_LOOP_RESTARTS, CRASH_LOOP_WINDOW_MS } from './health-settings.js';
import { endIncident, startIncident } from './incidents.js';

const WINDOW_MINUTES = Math.round(CRASH_LOOP_WINDOW_MS / 60_000);
/** More restarts than this in a window tell nothing more. */
const KEPT_RESTARTS = 100;

export type CrashLoopOutcome = 'crash_loop' | 'recovered' | null;

export async function recordRestarts(
  db: Kysely<Database>, service: WatchedService, restartCount: number, at: string, recentOperationId: string | null,
): Promise<CrashLoopOutcome> {
  const windowStart = new Date(Date.parse(at) - CRASH_LOOP_WINDOW_MS).toISOString();
  const before: string[] = JSON.parse(service.restarts_seen ?? '[]') as string[];
  const seen = before.filter((time) => time > windowStart);
  const previous = service.restart_count ?? null;
  if (previous !== null && restartCount > previous) seen.push(...Array<string>(Math.min(restartCount - previous, KEPT_RESTARTS)).fill(at));
  const restarts = seen.slice(-KEPT_RESTARTS);
  const counts = {
    restart_count: restartCount, restarts_seen: JSON.stringify(restarts), crash_loop_since: service.crash_loop_since ?? null,
  };
  const named = `ERP service "${service.name}"`;
  if (restarts.length >= CRASH_LOOP_RESTARTS && counts.crash_loop_since === null) {
    return inWriteTransaction(db, async (trx) => {
      await saveHealthChecks(trx, service.id, { ...counts, crash_loop_since: at });
      const sentence = `The engine restarted ${named} ${restarts.length} times within ${WINDOW_MINUTES} minutes: it crashes in a loop.`;
      await writeServiceHealthEvent(trx, service.id, 'service.crash_loop',
        { restarts: restarts.length, window_minutes: WINDOW_MINUTES, operation_id: recentOperationId }, sentence, at);
      await startIncident(trx, { teamId: service.team_id, type: 'service', id: service.id, name: service.name }, 'crash_loop', sentence, at);
      if (recentOperationId) {
        await addToOperationResult(trx, recentOperationId, { crash_loop: `${sentence} Seen at ${at}, within ${WINDOW_MINUTES} minutes after this operation.` });
      }
      return 'crash_loop' as const;
    });
  }
  if (restarts.length === 0 && counts.crash_loop_since !== null) {
    const since = counts.crash_loop_since;
    return inWriteTransaction(db, async (trx) => {
      await saveHealthChecks(trx, service.id, { ...counts, crash_loop_since: null });
      const sentence = `The engine has not restarted ${named} for ${WINDOW_MINUTES} minutes (it crashed in a loop since ${since}).`;
      await writeServiceHealthEvent(trx, service.id, 'service.recovered', { after: 'crash_loop', since }, sentence, at);
      await endIncident(trx, service.id, 'crash_loop', sentence, at);
      return 'recovered' as const;
    });
  }
  if (previous !== restartCount || restarts.length !== before.length) await saveHealthChecks(db, service.id, counts);
  return null;
}
