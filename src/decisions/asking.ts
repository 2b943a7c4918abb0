// A token asks the team a question (request_decision): the decision row and decision.needed,
// written together. The service it is about, if any, was checked as reachable by invoke(). With
// an Idempotency-Key, a retry of the same question returns the decision the first one asked
// (and announces nothing again); the same key with another question is refused, as for actions.
import { actingToken, type CapabilityContext } from '../core/capability.js';
import { findDecision, findDecisionRequest, insertDecision, insertDecisionRequest, type DecisionRow } from '../db/repositories/decisions.js';
import { idempotencyFingerprint, keyUsedForAnotherRequest } from '../engine/requests/enqueue.js';
import { newId, nowIso } from '../db/ids.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import { writeDecisionEvent } from './decision-events.js';

export const DEFAULT_DECISION_MINUTES = 24 * 60;
export const MAX_DECISION_MINUTES = 7 * 24 * 60;

export interface DecisionQuestion {
  question: string;
  options?: string[] | undefined;
  context?: string | undefined;
  service_id?: string | undefined;
  expires_in_minutes?: number | undefined;
}

/** A pending decision, not yet written: for a question a token asks, and for an approval. */
export function pendingDecision(asked: {
  id?: string; teamId: string; tokenId: string; channel: string; operationId?: string | null; at: string; expiresInMs: number;
}, question: Omit<DecisionQuestion, 'expires_in_minutes'>): DecisionRow {
  return {
    id: asked.id ?? newId('dec'), team_id: asked.teamId, asked_by_token_id: asked.tokenId, asked_channel: asked.channel,
    service_id: question.service_id ?? null, operation_id: asked.operationId ?? null, question: question.question,
    context: question.context ?? null, options: question.options ? JSON.stringify(question.options) : null, state: 'pending',
    answer: null, answered_by_type: null, answered_by_id: null, answered_channel: null, answered_at: null, created_at: asked.at,
    expires_at: new Date(Date.parse(asked.at) + asked.expiresInMs).toISOString(),
  };
}

export async function askDecision(
  context: Pick<CapabilityContext, 'db' | 'actor' | 'caller' | 'reach' | 'idempotencyKey'>, question: DecisionQuestion,
): Promise<DecisionRow> {
  const key = context.idempotencyKey;
  const fingerprint = idempotencyFingerprint(key, 'request_decision', question);
  const tokenId = actingToken(context.actor, 'Asking the team for a decision');
  const at = nowIso();
  const decision = pendingDecision({
    teamId: context.reach.teamId, tokenId, channel: context.actor.channel, at,
    expiresInMs: (question.expires_in_minutes ?? DEFAULT_DECISION_MINUTES) * 60_000,
  }, question);
  return inWriteTransaction(context.db.kysely, async (trx) => {
    if (key !== undefined && fingerprint !== null) {
      const earlier = await findDecisionRequest(trx, tokenId, key);
      if (earlier && earlier.request_fingerprint !== fingerprint) throw keyUsedForAnotherRequest();
      const asked = earlier && await findDecision(trx, earlier.decision_id);
      if (asked) return asked;
    }
    await insertDecision(trx, decision);
    if (key !== undefined && fingerprint !== null) {
      await insertDecisionRequest(trx, { asked_by_token_id: tokenId, idempotency_key: key, request_fingerprint: fingerprint, decision_id: decision.id });
    }
    await writeDecisionEvent(trx, 'decision.needed', decision, at, { askedByName: context.caller?.tokenName ?? tokenId });
    return decision;
  });
}
