// The watcher's events: each written with an activity-trail row (channel "health", the platform
// acting on its own, shown as the operator) in the transaction that changes the health it is
// about, so a subscriber, the activity trail and the row agree, and each happens once.
import type { Kysely } from 'kysely';
import { auditStamp } from '../core/audit.js';
import { insertEvent } from '../db/repositories/events.js';
import type { Database } from '../db/tables.js';
import { serviceUrl } from '../engine/service-url.js';

export const HEALTH_EVENT_TYPES = ['service.unhealthy', 'service.recovered', 'service.crash_loop', 'server.unreachable', 'server.recovered'] as const;
export type HealthEventType = (typeof HEALTH_EVENT_TYPES)[number];

/** What a service event says about the service, as the other service events do, with its health. */
export async function serviceOfEvent(trx: Kysely<Database>, serviceId: string) {
  const row = await trx.selectFrom('erp_services')
    .select(['id', 'team_id', 'name', 'server_id', 'parent_id', 'state', 'revision', 'port', 'published_host', 'proxy_upstream', 'health', 'health_since'])
    .where('id', '=', serviceId).executeTakeFirstOrThrow();
  return {
    teamId: row.team_id,
    view: {
      id: row.id, name: row.name, server_id: row.server_id, parent_id: row.parent_id, state: row.state, revision: row.revision,
      url: serviceUrl(row), health: row.health, health_since: row.health_since,
    },
  };
}

export async function writeServiceHealthEvent(
  trx: Kysely<Database>, serviceId: string, type: Extract<HealthEventType, `service.${string}`>, details: object, sentence: string, at: string,
): Promise<void> {
  const { teamId, view } = await serviceOfEvent(trx, serviceId);
  await insertEvent(trx, { teamId, type, at, data: { service: view, ...details } });
  await auditRow(trx, teamId, type, 'service', serviceId, sentence, at);
}

export async function writeServerHealthEvent(
  trx: Kysely<Database>, serverId: string, type: Extract<HealthEventType, `server.${string}`>, details: object, sentence: string, at: string,
): Promise<void> {
  const server = await trx.selectFrom('servers').select(['id', 'team_id', 'name', 'state', 'capacity', 'reachable', 'reachable_since'])
    .where('id', '=', serverId).executeTakeFirstOrThrow();
  await insertEvent(trx, {
    teamId: server.team_id, type, at,
    data: {
      server: {
        id: server.id, name: server.name, state: server.state, capacity: server.capacity, reachable: server.reachable === 1,
        reachable_since: server.reachable_since,
      },
      ...details,
    },
  });
  await auditRow(trx, server.team_id, type, 'server', serverId, sentence, at);
}

async function auditRow(trx: Kysely<Database>, teamId: string, action: HealthEventType, targetType: string, targetId: string, detail: string, at: string) {
  const recovered = action.endsWith('.recovered');
  await trx.insertInto('audit_log').values({
    ...auditStamp(at), team_id: teamId, actor_type: 'operator', actor_id: null, channel: 'health', action,
    target_type: targetType, target_id: targetId, outcome: recovered ? 'allowed' : 'failed', code: recovered ? null : action.replace('.', '_'),
    detail,
  }).execute();
}
