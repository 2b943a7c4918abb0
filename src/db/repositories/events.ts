// The events outbox. Written in the same transaction as the change that caused it, so an event
// exists exactly when its change does; the webhooks worker delivers them later. The payload is
// the Standard Webhooks body: { type, timestamp, data }.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { newId, nowIso } from '../ids.js';

export interface EventPayload<Data extends object = object> {
  type: string;
  timestamp: string;
  data: Data;
}

export async function insertEvent(
  db: Kysely<Database>,
  event: { teamId: string; type: string; data: object; at?: string },
): Promise<string> {
  const id = newId('evt');
  const timestamp = event.at ?? nowIso();
  const payload: EventPayload = { type: event.type, timestamp, data: event.data };
  await db.insertInto('events').values({
    id, team_id: event.teamId, type: event.type, payload: JSON.stringify(payload), created_at: timestamp, dispatched_at: null,
  }).execute();
  return id;
}

/** Oldest first; for the delivery worker and for tests. */
export async function listEvents(db: Kysely<Database>, teamId: string, options: { afterId?: string; limit?: number } = {}) {
  let query = db.selectFrom('events').selectAll().where('team_id', '=', teamId);
  if (options.afterId) query = query.where('id', '>', options.afterId);
  return query.orderBy('id').limit(options.limit ?? 100).execute();
}
