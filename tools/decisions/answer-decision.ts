import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import type { DecisionRow } from '../../src/db/repositories/decisions.js';
import { answerDecision, MAX_FREE_TEXT_ANSWER } from '../../src/decisions/answering.js';
import { DecisionId, DecisionView } from '../schemas.js';
import { decisionView } from '../views.js';

export default defineCapability({
  name: 'answer_decision',
  title: 'Answer a decision',
  description: 'Answers a pending decision another token asked; for an approval, approve runs the action and deny fails it.',
  permission: 'decisions:answer',
  target: { kind: 'decision', from: 'decision_id' },
  input: () => z.strictObject({
    decision_id: DecisionId(),
    answer: z.string().max(MAX_FREE_TEXT_ANSWER).describe('One of its options, or free text if none.'),
  }),
  output: DecisionView,
  http: { method: 'POST', path: '/api/decisions/{decision_id}/answer', status: 200 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict', 'own_decision'],
  run: async (input, context) => decisionView(await answerDecision(context, context.target as unknown as DecisionRow, input.answer,
    context.actor.userId === undefined ? { type: 'token', tokenId: context.actor.tokenId, channel: context.actor.channel }
      : { type: 'member', userId: context.actor.userId, channel: 'panel' })),
});
