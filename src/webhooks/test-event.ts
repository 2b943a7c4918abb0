// "Send test event" and "redeliver": deliveries aimed at one webhook, bypassing the fan-out.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { newId, nowIso } from '../db/ids.js';
import { insertDelivery } from '../db/repositories/webhooks.js';

export async function sendTestEvent(db: Kysely<Database>, teamId: string, webhookId: string): Promise<string> {
  const id = newId('evt');
  const at = nowIso();
  const payload = { type: 'webhook.test', timestamp: at, data: { message: 'This is a test event from teaminfra.', webhook_id: webhookId } };
  await db.transaction().execute(async (trx) => {
    // Already dispatched: it goes to this webhook only, not to every subscriber.
    await trx.insertInto('events').values({ id, team_id: teamId, type: 'webhook.test', payload: JSON.stringify(payload), created_at: at, dispatched_at: at }).execute();
    await insertDelivery(trx, webhookId, id, at);
  });
  return id;
}

/** A new delivery of the same event: same webhook-id, so receivers can recognise a repeat. */
export async function redeliver(db: Kysely<Database>, webhookId: string, deliveryId: string): Promise<boolean> {
  const previous = await db.selectFrom('webhook_deliveries').select('event_id').where('id', '=', deliveryId)
    .where('webhook_id', '=', webhookId).executeTakeFirst();
  if (!previous) return false;
  await insertDelivery(db, webhookId, previous.event_id);
  return true;
}
