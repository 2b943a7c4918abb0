// What a service's change of state means for its health and its incidents: running is healthy
// (the start, redeploy or restore waited for its health check), failed is unhealthy and a
// "service down" incident, anything else is unknown. A service stopped or deleted on purpose ends
// its incidents; one that runs again ends its "down" one (a crash loop ends only once the engine
// has stopped restarting it: the watcher sees that).
import type { Kysely } from 'kysely';
import type { Database, ServiceHealth, ServiceState } from '../db/tables.js';
import { endIncident, serviceSubject, startIncident } from './incidents.js';

export function healthOfState(state: ServiceState): ServiceHealth {
  if (state === 'running') return 'healthy';
  if (state === 'failed') return 'unhealthy';
  return 'unknown';
}

export async function settleIncidentsOfState(
  trx: Kysely<Database>, serviceId: string, change: { state: ServiceState; deleted?: boolean | undefined }, at: string,
): Promise<void> {
  if (change.state !== 'failed' && change.state !== 'running' && change.state !== 'stopped' && !change.deleted) return;
  const service = await trx.selectFrom('erp_services').select(['team_id', 'name', 'state_reason']).where('id', '=', serviceId).executeTakeFirst();
  if (!service) return;
  const named = `ERP service "${service.name}"`;
  if (change.deleted || change.state === 'stopped') {
    const what = `${named} was ${change.deleted ? 'deleted' : 'stopped'}.`;
    await endIncident(trx, serviceId, 'service_down', what, at);
    await endIncident(trx, serviceId, 'crash_loop', what, at);
    return;
  }
  if (change.state === 'running') {
    await endIncident(trx, serviceId, 'service_down', `${named} runs and answers its health check again.`, at);
    return;
  }
  const reason = service.state_reason ? `: ${service.state_reason}` : '.';
  await startIncident(trx, { teamId: service.team_id, type: 'service', id: serviceId, name: service.name }, 'service_down', `${named} failed${reason}`, at);
}

/** A backup failed: one email (an incident that ends as it starts), at most one an hour per service. */
export async function startBackupFailedIncident(
  trx: Kysely<Database>, backup: { service_id: string; kind: string; reason: string | null }, at: string,
): Promise<void> {
  const subject = await serviceSubject(trx, backup.service_id);
  if (!subject) return;
  const what = `A ${backup.kind} backup of ERP service "${subject.name}" failed${backup.reason ? `: ${backup.reason}` : '.'}`;
  await startIncident(trx, subject, 'backup_failed', what, at, { endsAtOnce: true });
}

/**
 * A backup's off-site copy failed (backup.offsite_failed, announced once per copy): a "backup
 * failed" email too, at most one an hour per service, since the team's protection against losing
 * the server is what failed. The server's copy is kept.
 */
export async function startOffsiteFailedIncident(
  trx: Kysely<Database>, copy: { service_id: string; kind: string; reason: string | null }, at: string,
): Promise<void> {
  const subject = await serviceSubject(trx, copy.service_id);
  if (!subject) return;
  const what = `The off-site copy of a ${copy.kind} backup of ERP service "${subject.name}" could not be stored${copy.reason ? `: ${copy.reason}` : '.'} The server's copy is kept.`;
  await startIncident(trx, subject, 'backup_failed', what, at, { endsAtOnce: true });
}
