import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { askDecision, MAX_DECISION_MINUTES, DEFAULT_DECISION_MINUTES } from '../../src/decisions/asking.js';
import { DecisionView, DisplayName, MultilineText, ServiceId } from '../schemas.js';
import { decisionView } from '../views.js';

// One line, read by a person choosing it: the rule of names (no control or text-direction characters), like the question's.
const Option = DisplayName;

export default defineCapability({
  name: 'request_decision',
  title: 'Ask the team for a decision',
  description:
    'Asks the team a question a person should answer: which of 2 to 10 options, or a free-text answer when no options are ' +
    'given. Webhooks receive decision.needed; a member answers in the panel (Decisions) or another token answers through ' +
    'answer_decision; this token can never answer its own question. Over MCP this tool waits for the answer (with progress ' +
    'notifications) and returns the decision answered, or still pending with its id after a time limit (then look again ' +
    `with get_decision). It expires unanswered after expires_in_minutes (default ${DEFAULT_DECISION_MINUTES}).`,
  permission: 'decisions:request',
  target: { kind: 'service', from: 'service_id', optional: true },
  input: z.strictObject({
    question: MultilineText(1000).describe('What needs deciding, 1 to 1000 characters.'),
    options: z.array(Option).min(2).max(10).optional()
      .refine((options) => options === undefined || new Set(options).size === options.length, 'Options must differ from each other.')
      .describe('2 to 10 distinct answers to choose from (each 1 to 100 characters); leave out for a free-text answer.'),
    context: MultilineText(4000).optional().describe('What the person answering should know, up to 4000 characters of plain text.'),
    service_id: ServiceId.optional().describe('The ERP service the decision is about; only those who reach it can see and answer it.'),
    expires_in_minutes: z.number().int().min(1).max(MAX_DECISION_MINUTES).optional()
      .describe(`Minutes until it expires unanswered, 1 to ${MAX_DECISION_MINUTES} (default ${DEFAULT_DECISION_MINUTES}: 24 hours).`),
  }),
  output: DecisionView,
  http: { method: 'POST', path: '/api/decisions', status: 201, idempotencyKey: true },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => decisionView(await askDecision(context, input)),
});
