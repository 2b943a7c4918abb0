import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { OperationDetailView, OperationId } from '../schemas.js';
import { operationStepsOf, type operationView } from '../views.js';
import { operationAnswer } from './operation-answer.js';

export default defineCapability({
  name: 'get_operation',
  title: 'Get an operation',
  description: "A long action's state, reason and steps. A create's initial_credentials come once, in the first answer of success.",
  permission: 'services:read',
  readableByRequester: true,
  target: { kind: 'operation', from: 'operation_id' },
  input: () => z.strictObject({ operation_id: OperationId() }),
  output: OperationDetailView,
  http: { method: 'GET', path: '/api/operations/{operation_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { db, target, actor, secrets }) => ({
    ...await operationAnswer(db.kysely, target as Parameters<typeof operationView>[0], { ...actor, answer: 'get_operation', secrets }),
    steps: operationStepsOf(target as { steps?: string | null }),
  }),
});
