import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { askDecision, MAX_DECISION_MINUTES, DEFAULT_DECISION_MINUTES } from '../../src/decisions/asking.js';
import { DecisionView, DisplayName, MultilineText, ServiceId } from '../schemas.js';
import { decisionView } from '../views.js';

// One line, read by a person choosing it: the rule of names (no control or text-direction characters), like the question's.
const Option = DisplayName;

export default defineCapability({
  name: 'request_decision',
  title: 'Ask the team a question',
  description:
    'Asks the team a question (free text or 2-10 options), answered in the panel or by answer_decision.',
  permission: 'decisions:request',
  target: { kind: 'service', from: 'service_id', optional: true },
  input: () => z.strictObject({
    question: MultilineText(1000),
    options: z.array(Option()).min(2).max(10).optional()
      .refine((options) => options === undefined || new Set(options).size === options.length, 'Options must differ from each other.')
      .describe('Absent: free text.'),
    context: MultilineText(4000).optional().describe('For the person answering.'),
    service_id: ServiceId().optional().describe('Seen only by those who reach it.'),
    expires_in_minutes: z.number().int().min(1).max(MAX_DECISION_MINUTES).optional()
      .describe(`Default ${DEFAULT_DECISION_MINUTES}.`),
  }),
  output: DecisionView,
  http: { method: 'POST', path: '/api/decisions', status: 201, idempotencyKey: true },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => decisionView(await askDecision(context, input)),
});
