// What one health check of a running service changes: its failed checks in a row (kept across
// nodes), and at the third (FAILED_CHECKS_BEFORE_UNHEALTHY) its health, unhealthy since the first
// of them, with service.unhealthy and a "service down" incident; the first check that passes
// after that makes it healthy again, with service.recovered, and ends the incident. A healthy
// service that stays healthy writes nothing.
import type { Kysely } from 'kysely';
import { changeServiceHealth, saveHealthChecks, type WatchedService } from '../db/repositories/service-health.js';
import type { Database } from '../db/tables.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import type { CheckResult } from './health-check.js';
import { writeServiceHealthEvent } from './health-events.js';
import { FAILED_CHECKS_BEFORE_UNHEALTHY } from './health-settings.js';
import { endIncident, startIncident } from './incidents.js';

export type CheckOutcome = 'unhealthy' | 'recovered' | 'healthy' | null;

export async function recordCheck(
  db: Kysely<Database>, service: WatchedService, result: CheckResult, healthPath: string, at: string,
): Promise<CheckOutcome> {
  const seen = { health: service.health, state: service.state };
  const named = `ERP service "${service.name}"`;
  if (result.ok) {
    const hadFailures = (service.failed_checks ?? 0) > 0;
    if (service.health === 'healthy') {
      if (hadFailures) await saveHealthChecks(db, service.id, { failed_checks: 0, first_failed_at: null, last_answer: null });
      return null;
    }
    return inWriteTransaction(db, async (trx) => {
      if (hadFailures) await saveHealthChecks(trx, service.id, { failed_checks: 0, first_failed_at: null, last_answer: null });
      if (!(await changeServiceHealth(trx, service.id, seen, 'healthy', at))) return null;
      if (service.health !== 'unhealthy') return 'healthy';
      const since = service.health_since ?? at;
      await writeServiceHealthEvent(trx, service.id, 'service.recovered', { after: 'unhealthy', since },
        `${named} answers its health check again (unhealthy since ${since}).`, at);
      await endIncident(trx, service.id, 'service_down', `${named} answers its health check again.`, at);
      return 'recovered';
    });
  }
  const failed = { failed_checks: (service.failed_checks ?? 0) + 1, first_failed_at: service.first_failed_at ?? at, last_answer: result.answer };
  if (failed.failed_checks < FAILED_CHECKS_BEFORE_UNHEALTHY || service.health === 'unhealthy') {
    await saveHealthChecks(db, service.id, failed);
    return null;
  }
  return inWriteTransaction(db, async (trx) => {
    await saveHealthChecks(trx, service.id, failed);
    if (!(await changeServiceHealth(trx, service.id, seen, 'unhealthy', failed.first_failed_at))) return null;
    const sentence = `${named} failed its health check (GET ${healthPath}) ${failed.failed_checks} times in a row since ${failed.first_failed_at}; ` +
      `the last one got: ${result.answer}.`;
    await writeServiceHealthEvent(trx, service.id, 'service.unhealthy', {
      checks_failed: failed.failed_checks, failing_since: failed.first_failed_at, last_answer: result.answer, health_path: healthPath,
    }, sentence, at);
    await startIncident(trx, { teamId: service.team_id, type: 'service', id: service.id, name: service.name }, 'service_down', sentence, at, { since: failed.first_failed_at });
    return 'unhealthy';
  });
}
