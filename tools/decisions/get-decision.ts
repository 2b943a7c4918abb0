import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import type { DecisionRow } from '../../src/db/repositories/decisions.js';
import { DecisionId, DecisionView } from '../schemas.js';
import { decisionView } from '../views.js';

export default defineCapability({
  name: 'get_decision',
  title: 'Get a decision',
  description: 'A decision: question, options, state, answer and who gave it.',
  permission: 'decisions:read',
  target: { kind: 'decision', from: 'decision_id' },
  input: () => z.strictObject({ decision_id: DecisionId() }),
  output: DecisionView,
  http: { method: 'GET', path: '/api/decisions/{decision_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { target }) => decisionView(target as unknown as DecisionRow),
});
