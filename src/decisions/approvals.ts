// Approval before an action, the hook the authorization core is given (approvalsOf(catalog) is
// CoreDeps.approvals): invoke() asks it whether the calling token needs approval for the
// capability, and then has it hold the action (holdForApproval()) instead of calling run().
// Nothing is queued: an operation in state awaiting_approval and a decision (options approve and
// deny) are written, with decision.needed. When the decision ends, settleAwaitingOperation()
// either carries the action out in the name of the token that asked, through the same checks as
// invoke() (token still valid, permission still held, target still reachable, the action's own
// checks), or fails the operation with the reason. The worker only ever takes queued operations,
// so an operation awaiting approval cannot run by any other path, before or after a restart.
import type { z } from 'zod';
import type { Kysely } from 'kysely';
import { isExpired } from '../auth/expiry.js';
import { principalOf } from '../core/authenticate.js';
import { AppError, toAppError } from '../core/errors.js';
import type { ApprovalDeps, ApprovalHook, Capability } from '../core/capability.js';
import { admissionRefusal, callerAccess, destructiveInput, permissionRefusal } from '../core/invoke.js';
import type { Channel, Principal } from '../core/principal.js';
import { resolveTarget } from '../core/reach.js';
import { findDecision, insertDecision, type DecisionRow } from '../db/repositories/decisions.js';
import { findOperation, type OperationRow } from '../db/repositories/operations.js';
import { findTokenWithTeamById } from '../db/repositories/tokens.js';
import type { Database } from '../db/tables.js';
import { newId, nowIso } from '../db/ids.js';
import { idempotencyFingerprint, retriedOperation } from '../engine/requests/enqueue.js';
import { recordOperationState } from '../engine/state-changes.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import { operationView } from '../../tools/views.js';
import type { Infer, OperationView } from '../../tools/schemas.js';
import { pendingDecision } from './asking.js';
import { writeDecisionEvent, type ApprovalAction } from './decision-events.js';

/** The hook the core asks (CoreDeps.approvals); an approved action is carried out by its name in `catalog`. */
export function approvalsOf(catalog: readonly Capability[]): ApprovalHook {
  return {
    waitsForApproval: needsApproval,
    hold: (deps, { capability, principal, channel, input, target, idempotencyKey }) =>
      holdForApproval(deps, capability, principal, channel, input, target, idempotencyKey),
    settle: (deps, operationId) => settleAwaitingOperation(deps, operationId, catalog),
  };
}

/** How long an approval may wait before it expires and its operation fails (TEAMINFRA_APPROVAL_HOURS, 1 to 168; default 24). */
export function approvalWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const hours = Number(env.TEAMINFRA_APPROVAL_HOURS ?? 24);
  return (Number.isFinite(hours) && hours >= 1 && hours <= 168 ? hours : 24) * 3_600_000;
}

export function needsApproval(principal: Principal, capability: Capability): boolean {
  return capability.approvable !== undefined && principal.needsApproval.has(capability.name);
}

/** The 202 answer of an action that now waits: its operation (awaiting_approval) names the decision. */
export async function holdForApproval(
  deps: ApprovalDeps, capability: Capability, principal: Principal, channel: Channel,
  input: Record<string, unknown>, target: Record<string, unknown> | undefined, idempotencyKey: string | undefined,
): Promise<Infer<typeof OperationView>> {
  const fingerprint = idempotencyFingerprint(idempotencyKey, capability.name, input);
  const row = await inWriteTransaction(deps.db.kysely, async (trx) => {
    const earlier = await retriedOperation(trx, principal.tokenId, idempotencyKey, fingerprint);
    if (earlier) return earlier;
    const at = nowIso();
    const action = describeAction(capability, input, target, newId('op'));
    const decisionId = newId('dec');
    const operation: OperationRow = {
      id: action.operation_id, team_id: principal.teamId, kind: heldKindOf(capability),
      service_id: action.service_id, server_id: action.server_id, state: 'awaiting_approval', reason: null,
      parameters: JSON.stringify({ approval: { capability: capability.name, input }, backup_id: action.backup_id ?? undefined }),
      result: null, requested_by_token_id: principal.tokenId, requested_channel: channel,
      idempotency_key: idempotencyKey ?? null, request_fingerprint: fingerprint, lease_owner: null, lease_expires_at: null,
      created_at: at, started_at: null, finished_at: null, decision_id: decisionId, steps: null, requested_by_user_id: null,
    };
    await trx.insertInto('operations').values(operation).execute();
    const decision = pendingDecision({
      id: decisionId, teamId: principal.teamId, tokenId: principal.tokenId, channel, operationId: operation.id, at,
      expiresInMs: approvalWaitMs(),
    }, {
      service_id: action.service_id ?? undefined,
      question: `The API token "${principal.tokenName}" asks to ${lowerFirst(capability.title)}: ${describeTarget(action)}. Approve it?`,
      context: `This token needs approval for ${capability.name}. "approve" carries the action out; "deny" fails it. ` +
        'It does not run until someone other than the token that asked approves it.',
      options: ['approve', 'deny'],
    });
    await insertDecision(trx, decision);
    await recordOperationState(trx, operation, 'awaiting_approval', null, at);
    await writeDecisionEvent(trx, 'decision.needed', decision, at, { askedByName: principal.tokenName, action });
    return operation;
  });
  return operationView(row);
}

/**
 * Ends the wait of an operation whose decision has ended: approved, it is carried out; denied,
 * expired or cancelled, it fails with the reason. Safe to call more than once and from any node
 * (the sweeper calls it for operations left waiting by a crash between the answer and this).
 */
async function settleAwaitingOperation(deps: ApprovalDeps, operationId: string, catalog: readonly Capability[]): Promise<void> {
  const operation = await findOperation(deps.db.kysely, operationId);
  if (!operation || operation.state !== 'awaiting_approval' || !operation.decision_id) return;
  const decision = await findDecision(deps.db.kysely, operation.decision_id);
  if (!decision || decision.state === 'pending') return;
  if (decision.state === 'answered' && decision.answer === 'approve') return carryOut(deps, operation, decision, catalog);
  await failAwaiting(deps.db.kysely, operation, notApprovedReason(decision));
}

/** The kind of the operation that waits: the one the action queues, or the one it is held as. */
function heldKindOf(capability: Capability): string {
  const approvable = capability.approvable!;
  return 'queues' in approvable ? approvable.queues : approvable.heldAs;
}

function notApprovedReason(decision: DecisionRow): string {
  switch (decision.state) {
    case 'answered': return `Not approved: denied in decision ${decision.id}.`;
    case 'expired': return `Not approved: decision ${decision.id} expired at ${decision.expires_at} without an answer.`;
    default: return `Not approved: the token that asked cancelled decision ${decision.id}.`;
  }
}

/** invoke()'s checks again, for the token that asked, as it stands now; then the action itself. */
async function carryOut(deps: ApprovalDeps, operation: OperationRow, decision: DecisionRow, catalog: readonly Capability[]): Promise<void> {
  const { approval } = JSON.parse(operation.parameters) as { approval?: { capability: string; input: unknown } };
  const capability = catalog.find((entry) => entry.name === approval?.capability);
  try {
    if (!approval || !capability) throw new AppError('conflict', 'This action is no longer offered.');
    const row = operation.requested_by_token_id ? await findTokenWithTeamById(deps.db.kysely, operation.requested_by_token_id) : undefined;
    if (!row || row.revoked_at !== null || isExpired(row.expires_on, row.timezone)) {
      throw new AppError('conflict', 'The API token that asked for it was revoked or expired before it was approved.');
    }
    const principal = principalOf(row);
    const channel = (operation.requested_channel === 'mcp' ? 'mcp' : 'api') as Channel;
    // invoke()'s own admission and permission steps, as the token stands now.
    const refusal = admissionRefusal(principal, channel) ?? permissionRefusal(principal, capability);
    if (refusal) throw refusal;
    const parsed = capability.input.safeParse(approval.input);
    if (!parsed.success) throw new AppError('conflict', 'The request it was asked with is no longer valid.');
    const input = parsed.data as Record<string, unknown>;
    const target = await resolveTarget(deps.db, principal.reach, capability.target, input);
    await destructiveInput(deps.db, principal, capability, input, target);
    await capability.run(input, {
      db: deps.db, reach: principal.reach, actor: { tokenId: principal.tokenId, channel }, caller: callerAccess(principal),
      target, idempotencyKey: undefined, publicUrl: deps.publicUrl, approvedOperationId: operation.id, approvals: deps.approvals,
    });
    deps.audit?.record({
      team_id: operation.team_id, actor_type: 'token', actor_id: principal.tokenId, channel, action: capability.name,
      target_type: capability.target.kind, target_id: String(input['from' in capability.target ? capability.target.from : ''] ?? ''),
      outcome: 'allowed', code: null, detail: `approved in decision ${decision.id}`,
    });
  } catch (thrown) {
    const error = toAppError(thrown);
    if (error.code === 'internal') deps.onInternalError?.(error, approval?.capability ?? 'approval');
    const reason = error.code === 'not_found'
      ? 'Approved, but what it acts on no longer exists or the token that asked can no longer reach it.'
      : `Approved, but it could not be carried out: ${error.detail}`;
    await failAwaiting(deps.db.kysely, operation, reason);
  }
}

async function failAwaiting(db: Kysely<Database>, operation: OperationRow, reason: string): Promise<void> {
  await inWriteTransaction(db, async (trx) => {
    const at = nowIso();
    const result = await trx.updateTable('operations').set({ state: 'failed', reason, finished_at: at })
      .where('id', '=', operation.id).where('state', '=', 'awaiting_approval').executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) await recordOperationState(trx, { ...operation, state: 'failed', reason }, 'failed', reason, at);
  });
}

function describeAction(
  capability: Capability, input: Record<string, unknown>, target: Record<string, unknown> | undefined, operationId: string,
): ApprovalAction {
  const backupTarget = capability.target.kind === 'backup';
  const serviceId = backupTarget
    ? (typeof input.target_service_id === 'string' ? input.target_service_id : String(target?.service_id ?? ''))
    : capability.target.kind === 'service' ? String(target?.id ?? '') : null;
  return {
    capability: capability.name, title: capability.title, operation_id: operationId,
    service_id: serviceId || null,
    server_id: capability.target.kind === 'service' ? (target?.server_id as string | undefined) ?? null
      : capability.target.kind === 'server' ? String(target?.id ?? '') || null : null,
    backup_id: backupTarget ? String(target?.id ?? '') || null : null,
  };
}

function describeTarget(action: ApprovalAction): string {
  const parts = [];
  if (action.backup_id) parts.push(`backup ${action.backup_id}`);
  if (action.service_id) parts.push(`${action.backup_id ? 'into ' : ''}ERP service ${action.service_id}`);
  if (!action.service_id && action.server_id) parts.push(`server ${action.server_id}`);
  return parts.join(' ') || 'the team';
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
