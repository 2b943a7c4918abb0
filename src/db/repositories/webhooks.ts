// Webhooks, the fan-out of events into deliveries, and the delivery queue. Signing secrets are
// stored sealed (src/secrets), each bound to its webhook; whoever signs reveals them.
import type { Kysely } from 'kysely';
import type { Database } from '../tables.js';
import { inTransaction, skipLocked } from '../dialect.js';
import { newId, nowIso } from '../ids.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { generateWebhookSecret } from '../../webhooks/signing.js';

export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** What a webhook's secrets are sealed with: its id, so a sealed secret copied to another webhook does not open. */
export function webhookSecretContext(webhookId: string): string {
  return `webhook:${webhookId}`;
}

export async function insertWebhook(
  db: Kysely<Database>,
  secrets: SecretBox,
  values: { teamId: string; url: string; description: string; eventTypes: readonly string[] | '*'; allowPrivate: boolean },
): Promise<{ id: string; secret: string }> {
  const id = newId('wh');
  const secret = generateWebhookSecret();
  await db.insertInto('webhooks').values({
    id, team_id: values.teamId, url: values.url, description: values.description,
    event_types: values.eventTypes === '*' ? '*' : values.eventTypes.join(','),
    secret: secrets.seal(secret, webhookSecretContext(id)), previous_secret: null,
    previous_secret_expires_at: null, allow_private: values.allowPrivate ? 1 : 0, enabled: 1, disabled_reason: null,
    failing_since: null, created_at: nowIso(),
  }).execute();
  return { id, secret };
}

export async function listWebhooks(db: Kysely<Database>, teamId: string) {
  return db.selectFrom('webhooks').select(['id', 'url', 'description', 'event_types', 'enabled', 'disabled_reason', 'failing_since',
    'previous_secret_expires_at', 'created_at']).where('team_id', '=', teamId).orderBy('id').execute();
}

export async function findWebhook(db: Kysely<Database>, teamId: string, webhookId: string) {
  return db.selectFrom('webhooks').selectAll().where('team_id', '=', teamId).where('id', '=', webhookId).executeTakeFirst();
}

/** A new secret; the previous one stays valid (and signs too) for 24 hours. */
export async function rotateWebhookSecret(db: Kysely<Database>, secrets: SecretBox, webhookId: string): Promise<string> {
  const secret = generateWebhookSecret();
  const context = webhookSecretContext(webhookId);
  const current = await db.selectFrom('webhooks').select('secret').where('id', '=', webhookId).executeTakeFirstOrThrow();
  await db.updateTable('webhooks').set({
    secret: secrets.seal(secret, context),
    // Kept sealed as it is (or sealed now, if an earlier version left it in clear).
    previous_secret: secrets.resealed(current.secret, context) ?? current.secret,
    previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString(),
  }).where('id', '=', webhookId).execute();
  return secret;
}

/**
 * Seals with the current key every webhook secret in clear or sealed with a previous key; at
 * start (src/secrets/seal-stored-secrets.ts). Returns how many webhooks changed.
 */
export async function sealWebhookSecrets(db: Kysely<Database>, secrets: SecretBox): Promise<number> {
  const rows = await db.selectFrom('webhooks').select(['id', 'secret', 'previous_secret']).execute();
  let changed = 0;
  for (const row of rows) {
    const context = webhookSecretContext(row.id);
    const secret = secrets.resealed(row.secret, context);
    const previous = row.previous_secret === null ? undefined : secrets.resealed(row.previous_secret, context);
    if (secret === undefined && previous === undefined) continue;
    // Only over the values read: a rotation made meanwhile by another node is kept.
    await db.updateTable('webhooks').set({ secret: secret ?? row.secret, previous_secret: previous ?? row.previous_secret })
      .where('id', '=', row.id).where('secret', '=', row.secret)
      .where('previous_secret', row.previous_secret === null ? 'is' : '=', row.previous_secret).execute();
    changed += 1;
  }
  return changed;
}

export async function setWebhookEnabled(db: Kysely<Database>, webhookId: string, enabled: boolean, reason: string | null): Promise<void> {
  await db.updateTable('webhooks').set({ enabled: enabled ? 1 : 0, disabled_reason: enabled ? null : reason, ...(enabled ? { failing_since: null } : {}) })
    .where('id', '=', webhookId).execute();
}

export async function deleteWebhook(db: Kysely<Database>, webhookId: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', webhookId).execute();
}

export async function listRecentDeliveries(db: Kysely<Database>, webhookId: string, limit = 50) {
  return db.selectFrom('webhook_deliveries as d').innerJoin('events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.event_id', 'e.type', 'd.state', 'd.attempts', 'd.next_attempt_at', 'd.last_status', 'd.last_duration_ms',
      'd.last_response_excerpt', 'd.last_error', 'd.updated_at'])
    .where('d.webhook_id', '=', webhookId).orderBy('d.id', 'desc').limit(limit).execute();
}

function subscribes(eventTypes: string, type: string): boolean {
  return eventTypes === '*' || eventTypes.split(',').includes(type);
}

/**
 * Turns undispatched events into one delivery per subscribed, enabled webhook. Each event is
 * dispatched once even when several nodes do this at the same moment: the events taken are
 * locked (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the write lock) until marked dispatched.
 */
export async function dispatchEvents(db: Kysely<Database>, limit = 100): Promise<number> {
  return inTransaction(db, 'claim', async (trx) => {
    const events = await skipLocked(trx, trx.selectFrom('events').select(['id', 'team_id', 'type']).where('dispatched_at', 'is', null)
      .orderBy('id').limit(limit)).execute();
    const now = nowIso();
    for (const event of events) {
      const hooks = await trx.selectFrom('webhooks').select(['id', 'event_types']).where('team_id', '=', event.team_id)
        .where('enabled', '=', 1).execute();
      for (const hook of hooks.filter((candidate) => subscribes(candidate.event_types, event.type))) {
        await insertDelivery(trx, hook.id, event.id, now);
      }
      await trx.updateTable('events').set({ dispatched_at: now }).where('id', '=', event.id).execute();
    }
    return events.length;
  });
}

export async function insertDelivery(db: Kysely<Database>, webhookId: string, eventId: string, at = nowIso()): Promise<string> {
  const id = newId('dlv');
  await db.insertInto('webhook_deliveries').values({
    id, webhook_id: webhookId, event_id: eventId, state: 'pending', attempts: 0, next_attempt_at: at, last_status: null,
    last_duration_ms: null, last_response_excerpt: null, last_error: null, lease_owner: null, lease_expires_at: null,
    created_at: at, updated_at: at,
  }).execute();
  return id;
}

/**
 * Leases due deliveries to this worker; a lease that expired (a dead worker) is taken over.
 * Several nodes claiming at once take different deliveries (see `dispatchEvents`).
 */
export async function claimDueDeliveries(db: Kysely<Database>, owner: string, leaseMs: number, limit: number) {
  const now = nowIso();
  const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
  return inTransaction(db, 'claim', async (trx) => {
    const due = await skipLocked(trx, trx.selectFrom('webhook_deliveries').select('id').where('state', '=', 'pending').where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .orderBy('next_attempt_at').limit(limit)).execute();
    if (due.length === 0) return [];
    const ids = due.map((row) => row.id);
    await trx.updateTable('webhook_deliveries').set({ lease_owner: owner, lease_expires_at: leaseUntil }).where('id', 'in', ids).execute();
    return trx.selectFrom('webhook_deliveries as d').innerJoin('webhooks as w', 'w.id', 'd.webhook_id').innerJoin('events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.attempts', 'd.event_id', 'e.payload', 'w.id as webhook_id', 'w.team_id', 'w.url', 'w.secret', 'w.previous_secret',
        'w.previous_secret_expires_at', 'w.allow_private', 'w.enabled', 'w.failing_since'])
      .where('d.id', 'in', ids).execute();
  });
}

export type ClaimedDelivery = Awaited<ReturnType<typeof claimDueDeliveries>>[number];

export async function recordAttempt(
  db: Kysely<Database>,
  deliveryId: string,
  result: { state: 'pending' | 'delivered' | 'failed'; attempts: number; nextAttemptAt: string; status: number | null; durationMs: number; excerpt: string | null; error: string | null },
): Promise<void> {
  await db.updateTable('webhook_deliveries').set({
    state: result.state, attempts: result.attempts, next_attempt_at: result.nextAttemptAt, last_status: result.status,
    last_duration_ms: result.durationMs, last_response_excerpt: result.excerpt, last_error: result.error,
    lease_owner: null, lease_expires_at: null, updated_at: nowIso(),
  }).where('id', '=', deliveryId).execute();
}

export async function markWebhookHealth(db: Kysely<Database>, webhookId: string, healthy: boolean): Promise<void> {
  if (healthy) {
    await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', webhookId).execute();
  } else {
    await db.updateTable('webhooks').set({ failing_since: nowIso() }).where('id', '=', webhookId).where('failing_since', 'is', null).execute();
  }
}
