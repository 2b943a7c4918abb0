import { z } from 'zod';
import { actingToken, defineCapability } from '../../src/core/capability.js';
import type { DecisionRow } from '../../src/db/repositories/decisions.js';
import { cancelDecision } from '../../src/decisions/answering.js';
import { DecisionId, DecisionView } from '../schemas.js';
import { decisionView } from '../views.js';

export default defineCapability({
  name: 'cancel_decision',
  title: 'Cancel a decision',
  description: "Withdraws a pending decision this token asked; an approval's action then fails.",
  permission: 'decisions:request',
  target: { kind: 'decision', from: 'decision_id' },
  input: () => z.strictObject({ decision_id: DecisionId() }),
  output: DecisionView,
  http: { method: 'POST', path: '/api/decisions/{decision_id}/cancel', status: 200 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict', 'not_decision_asker'],
  run: async (_input, context) => decisionView(await cancelDecision(context, context.target as unknown as DecisionRow,
    actingToken(context.actor, 'Cancelling a decision'), context.actor.channel)),
});
