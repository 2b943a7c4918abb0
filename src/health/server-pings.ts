// What one ping of a Docker server's engine changes: its failed pings in a row, and at the third
// (FAILED_PINGS_BEFORE_UNREACHABLE) its reachability, with server.unreachable and an incident; the
// first ping answered after that makes it reachable again, with server.recovered, and ends it.
// While a server is unreachable its services are not checked: one incident, not one per service.
import type { Kysely } from 'kysely';
import { changeServerReachability, type PingedServer } from '../db/repositories/service-health.js';
import type { Database } from '../db/tables.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import { writeServerHealthEvent } from './health-events.js';
import { FAILED_PINGS_BEFORE_UNREACHABLE } from './health-settings.js';
import { endIncident, startIncident } from './incidents.js';

export type PingResult = { ok: true } | { ok: false; error: string };
export type PingOutcome = 'unreachable' | 'recovered' | null;

export async function recordPing(db: Kysely<Database>, server: PingedServer, result: PingResult, at: string): Promise<PingOutcome> {
  const seen = { reachable: server.reachable, failed_pings: server.failed_pings };
  const named = `Server "${server.name}"`;
  if (result.ok) {
    if (server.reachable === 1) {
      if (server.failed_pings > 0) await changeServerReachability(db, server.id, seen, { reachable: 1, failed_pings: 0 });
      return null;
    }
    return inWriteTransaction(db, async (trx) => {
      if (!(await changeServerReachability(trx, server.id, seen, { reachable: 1, failed_pings: 0, reachable_since: at }))) return null;
      const since = server.reachable_since ?? at;
      const sentence = `${named}: its Docker engine answers again (it did not since ${since}).`;
      await writeServerHealthEvent(trx, server.id, 'server.recovered', { since }, sentence, at);
      await endIncident(trx, server.id, 'server_unreachable', sentence, at);
      return 'recovered' as const;
    });
  }
  const failedPings = server.failed_pings + 1;
  if (server.reachable === 0 || failedPings < FAILED_PINGS_BEFORE_UNREACHABLE) {
    await changeServerReachability(db, server.id, seen, { reachable: server.reachable, failed_pings: failedPings });
    return null;
  }
  return inWriteTransaction(db, async (trx) => {
    if (!(await changeServerReachability(trx, server.id, seen, { reachable: 0, failed_pings: failedPings, reachable_since: at }))) return null;
    const sentence = `${named}: its Docker engine did not answer ${failedPings} pings in a row; the last: ${result.error}`;
    await writeServerHealthEvent(trx, server.id, 'server.unreachable', { failed_pings: failedPings, error: result.error }, sentence, at);
    await startIncident(trx, { teamId: server.team_id, type: 'server', id: server.id, name: server.name }, 'server_unreachable', sentence, at);
    return 'unreachable' as const;
  });
}
