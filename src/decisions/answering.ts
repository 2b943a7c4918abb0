// Answering and cancelling a decision: the rules, shared by the API (answer_decision,
// cancel_decision) and the panel's Decisions page. Who may see the decision at all (reach) is
// checked before this, by invoke() or by the panel's team session.
import type { Db } from '../db/connect.js';
import { closeDecision, findDecision, type DecisionRow } from '../db/repositories/decisions.js';
import { nowIso } from '../db/ids.js';
import { AppError } from '../core/errors.js';
import { multilineTextProblem } from '../core/plain-text.js';
import { inWriteTransaction } from '../engine/write-transaction.js';
import type { ApprovalDeps } from '../core/capability.js';
import type { Channel } from '../core/principal.js';
import { writeDecisionEvent } from './decision-events.js';

export type Answerer =
  | { type: 'token'; tokenId: string; channel: Channel }
  | { type: 'member'; userId: string; channel: 'panel' };

export const MAX_FREE_TEXT_ANSWER = 2000;

export async function answerDecision(deps: ApprovalDeps, decision: DecisionRow, rawAnswer: string, answerer: Answerer): Promise<DecisionRow> {
  if (answerer.type === 'token' && answerer.tokenId === decision.asked_by_token_id) {
    throw new AppError('own_decision',
      'This API token asked this decision, so it cannot answer it: a member (in the panel) or another token with decisions:answer must.');
  }
  refuseIfClosed(decision, 'answer');
  const answer = validAnswer(decision, rawAnswer);
  const at = nowIso();
  const closed = await inWriteTransaction(deps.db.kysely, async (trx) => {
    const won = await closeDecision(trx, decision.id, {
      state: 'answered', answer, answered_by_type: answerer.type,
      answered_by_id: answerer.type === 'token' ? answerer.tokenId : answerer.userId, answered_channel: answerer.channel, answered_at: at,
    }, at);
    if (!won) return undefined;
    const row = (await findDecision(trx, decision.id))!;
    await writeDecisionEvent(trx, 'decision.answered', row, at);
    return row;
  });
  if (!closed) {
    // Someone answered (or it expired) between our read and our write: say what happened.
    refuseIfClosed((await findDecision(deps.db.kysely, decision.id)) ?? decision, 'answer', at);
    throw new AppError('conflict', 'This decision changed while it was being answered. Read it again.');
  }
  if (closed.operation_id) await deps.approvals.settle(deps, closed.operation_id);
  return closed;
}

export async function cancelDecision(deps: ApprovalDeps, decision: DecisionRow, tokenId: string, channel: Channel): Promise<DecisionRow> {
  if (tokenId !== decision.asked_by_token_id) {
    throw new AppError('not_decision_asker', 'Only the API token that asked this decision can cancel it; answer it instead.');
  }
  refuseIfClosed(decision, 'cancel');
  const at = nowIso();
  const won = await inWriteTransaction(deps.db.kysely, (trx) => closeDecision(trx, decision.id, {
    state: 'cancelled', answer: null, answered_by_type: 'token', answered_by_id: tokenId, answered_channel: channel, answered_at: at,
  }, null));
  const row = (await findDecision(deps.db.kysely, decision.id))!;
  if (!won) refuseIfClosed(row, 'cancel');
  if (row.operation_id) await deps.approvals.settle(deps, row.operation_id);
  return row;
}

function refuseIfClosed(decision: DecisionRow, verb: 'answer' | 'cancel', now = nowIso()): void {
  if (decision.state === 'answered') {
    throw new AppError('conflict', `This decision was already answered ("${decision.answer}") at ${decision.answered_at}; it cannot be ${verb === 'answer' ? 'answered again' : 'cancelled'}.`);
  }
  if (decision.state === 'cancelled') throw new AppError('conflict', `This decision was cancelled at ${decision.answered_at}.`);
  if (decision.state === 'expired' || decision.expires_at <= now) {
    throw new AppError('conflict', `This decision expired at ${decision.expires_at} without an answer; ask again if it is still needed.`);
  }
}

function validAnswer(decision: DecisionRow, rawAnswer: string): string {
  const answer = rawAnswer.trim();
  if (decision.options !== null) {
    const options = JSON.parse(decision.options) as string[];
    if (!options.includes(answer)) {
      throw new AppError('validation_failed', `The answer must be one of the options: ${options.map((option) => `"${option}"`).join(', ')}.`, {
        errors: [{ field: 'answer', message: `One of: ${options.join(', ')}.` }],
      });
    }
    return answer;
  }
  const problem = answer.length === 0 ? 'must not be empty.' : answer.length > MAX_FREE_TEXT_ANSWER
    ? `must be at most ${MAX_FREE_TEXT_ANSWER} characters.` : multilineTextProblem(answer);
  if (problem) throw new AppError('validation_failed', `The answer ${problem}`, { errors: [{ field: 'answer', message: `The answer ${problem}` }] });
  return answer;
}
