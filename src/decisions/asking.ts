// A token asks the team a question (request_decision): the decision row and decision.needed,
// written together. The service it is about, if any, was checked as reachable by invoke().
import type { CapabilityContext } from '../core/capability.js';
import { insertDecision, type DecisionRow } from '../db/repositories/decisions.js';
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

export async function askDecision(context: Pick<CapabilityContext, 'db' | 'actor' | 'caller' | 'reach'>, question: DecisionQuestion): Promise<DecisionRow> {
  const at = nowIso();
  const decision = pendingDecision({
    teamId: context.reach.teamId, tokenId: context.actor.tokenId, channel: context.actor.channel, at,
    expiresInMs: (question.expires_in_minutes ?? DEFAULT_DECISION_MINUTES) * 60_000,
  }, question);
  await inWriteTransaction(context.db.kysely, async (trx) => {
    await insertDecision(trx, decision);
    await writeDecisionEvent(trx, 'decision.needed', decision, at, { askedByName: context.caller.tokenName });
  });
  return decision;
}
