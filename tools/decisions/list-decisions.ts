import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listReachableDecisions } from '../../src/db/repositories/decisions.js';
import { toPage } from '../../src/db/pagination.js';
import { DecisionView, PageInput, pageOf } from '../schemas.js';
import { decisionView } from '../views.js';

export default defineCapability({
  name: 'list_decisions',
  title: 'List decisions',
  description: 'Decisions this token reaches; state filters them (e.g. pending).',
  permission: 'decisions:read',
  target: { kind: 'team' },
  input: () => z.strictObject({
    state: z.enum(['pending', 'answered', 'expired', 'cancelled']).optional(),
    ...PageInput(),
  }),
  output: () => pageOf(DecisionView()),
  http: { method: 'GET', path: '/api/decisions', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed'],
  run: async (input, { db, reach }) =>
    toPage(await listReachableDecisions(db.kysely, reach, input, input.state), input.limit, decisionView),
});
