// Queues one operation on behalf of a capability: idempotency, the caller's plan (which checks
// state and writes the service's transitional state), the operation row, its first transition
// and events, all in one write transaction. The API then answers 202 with the row.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CapabilityContext } from '../../core/capability.js';
import { AppError } from '../../core/errors.js';
import type { Database } from '../../db/tables.js';
import { newId, nowIso } from '../../db/ids.js';
import {
  findOperationByIdempotencyKey, insertOperation, type NewOperation, type OperationRow,
} from '../../db/repositories/operations.js';
import { recordOperationState } from '../state-changes.js';
import { announceQueued } from '../wake.js';
import { inWriteTransaction } from '../write-transaction.js';

export type RequestContext = Pick<CapabilityContext, 'db' | 'reach' | 'actor' | 'idempotencyKey' | 'approvedOperationId'>;

export type PlannedOperation = Pick<NewOperation, 'kind' | 'serviceId' | 'serverId' | 'parameters'> & {
  /** Writes rows that refer to the operation (a backup's row), once it exists, in the same transaction. */
  afterInsert?: (trx: Kysely<Database>, operation: OperationRow) => Promise<void>;
};

/** Checks and prepares inside the transaction; throws an AppError to refuse. */
export type Plan = (trx: Kysely<Database>, context: { operationId: string; at: string }) => Promise<PlannedOperation>;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The fingerprint a retry with this Idempotency-Key must match (null without a key); a malformed key is refused. */
export function idempotencyFingerprint(key: string | undefined, capability: string, input: object): string | null {
  if (key === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new AppError('validation_failed', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.', {
      errors: [{ field: 'Idempotency-Key', message: 'Use 1 to 255 visible ASCII characters, such as a UUID.' }],
    });
  }
  return fingerprintOf(capability, input);
}

/**
 * The operation an earlier request with this key made, when this request is its retry; undefined
 * for a new key; a key already used for a different request is refused (409).
 */
export async function retriedOperation(
  trx: Kysely<Database>, tokenId: string, key: string | undefined, fingerprint: string | null,
): Promise<OperationRow | undefined> {
  if (key === undefined) return undefined;
  const earlier = await findOperationByIdempotencyKey(trx, tokenId, key);
  if (earlier && earlier.request_fingerprint !== fingerprint) throw keyUsedForAnotherRequest();
  return earlier;
}

export function keyUsedForAnotherRequest(): AppError {
  return new AppError('conflict',
    'This Idempotency-Key was already used for a different request. Reuse a key only to retry the very same ' +
      'request; send a new key for a new request.');
}

export async function enqueue(context: RequestContext, capability: string, input: object, plan: Plan): Promise<OperationRow> {
  if (context.approvedOperationId) return queueApproved(context, context.approvedOperationId, plan);
  const key = context.idempotencyKey;
  const fingerprint = idempotencyFingerprint(key, capability, input);
  const { operation, queued } = await inWriteTransaction(context.db.kysely, async (trx) => {
    // Only a token sends an Idempotency-Key; a member's form is sent once (the panel answers with a redirect).
    const earlier = context.actor.tokenId === undefined ? undefined : await retriedOperation(trx, context.actor.tokenId, key, fingerprint);
    if (earlier) return { operation: earlier, queued: false };
    const at = nowIso();
    const operationId = newId('op');
    const { afterInsert, ...planned } = await plan(trx, { operationId, at });
    const row = await insertOperation(trx, {
      ...planned, teamId: context.reach.teamId, tokenId: context.actor.tokenId ?? null, userId: context.actor.userId ?? null,
      channel: context.actor.channel,
      idempotencyKey: key ?? null, fingerprint,
    }, operationId, at);
    await afterInsert?.(trx, row);
    await recordOperationState(trx, row, 'queued', null, at);
    return { operation: row, queued: true };
  });
  if (queued) announceQueued();
  return operation;
}

/**
 * An approved operation is queued in place: the plan runs now (its checks see the service as it
 * is now, not as it was when approval was asked) and the awaiting row becomes the queued one.
 */
async function queueApproved(context: RequestContext, operationId: string, plan: Plan): Promise<OperationRow> {
  const operation = await inWriteTransaction(context.db.kysely, async (trx) => {
    const awaiting = await trx.selectFrom('operations').selectAll().where('id', '=', operationId)
      .where('state', '=', 'awaiting_approval').executeTakeFirst();
    if (!awaiting) throw new AppError('conflict', `Operation ${operationId} no longer awaits approval.`);
    const at = nowIso();
    const { afterInsert, ...planned } = await plan(trx, { operationId, at });
    const row: OperationRow = {
      ...awaiting, kind: planned.kind, service_id: planned.serviceId, server_id: planned.serverId,
      parameters: JSON.stringify(planned.parameters), state: 'queued',
    };
    await trx.updateTable('operations')
      .set({ state: 'queued', kind: row.kind, service_id: row.service_id, server_id: row.server_id, parameters: row.parameters })
      .where('id', '=', operationId).execute();
    await afterInsert?.(trx, row);
    await recordOperationState(trx, row, 'queued', null, at);
    return row;
  });
  announceQueued();
  return operation;
}

/**
 * An approved action answered at once (a capability `approvable.heldAs`) is done by its run(),
 * in the transaction given: the operation that only waited for the approval succeeds with it.
 */
export async function succeedApprovedInPlace(trx: Kysely<Database>, operationId: string, at: string): Promise<void> {
  const awaiting = await trx.selectFrom('operations').selectAll().where('id', '=', operationId)
    .where('state', '=', 'awaiting_approval').executeTakeFirst();
  if (!awaiting) throw new AppError('conflict', `Operation ${operationId} no longer awaits approval.`);
  await trx.updateTable('operations').set({ state: 'succeeded', started_at: at, finished_at: at })
    .where('id', '=', operationId).where('state', '=', 'awaiting_approval').execute();
  await recordOperationState(trx, { ...awaiting, state: 'succeeded', started_at: at, finished_at: at }, 'succeeded', null, at);
}

/** The same capability with the same input gives the same fingerprint, whatever the key order. */
export function fingerprintOf(capability: string, input: object): string {
  return createHash('sha256').update(JSON.stringify([capability, canonical(input)])).digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}

export function operationInFlight(what: string, busy: { id: string; kind: string; state: string }): AppError {
  return new AppError('conflict',
    `${what} already has an operation in progress: ${busy.id} (${busy.kind}, ${busy.state}). ` +
      'Wait for it to finish (GET /api/operations/' + busy.id + '), then try again.',
    { operationId: busy.id });
}
