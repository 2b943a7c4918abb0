import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { OperationDetailView, OperationId } from '../schemas.js';
import { operationStepsOf, operationView } from '../views.js';

export default defineCapability({
  name: 'get_operation',
  title: 'Get an operation',
  description: "A long action's state, failure reason and steps: poll it until it ends.",
  permission: 'services:read',
  readableByRequester: true,
  target: { kind: 'operation', from: 'operation_id' },
  input: () => z.strictObject({ operation_id: OperationId() }),
  output: OperationDetailView,
  http: { method: 'GET', path: '/api/operations/{operation_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { target, actor, secrets }) => ({
    ...operationView(target as Parameters<typeof operationView>[0], { tokenId: actor.tokenId, secrets }),
    steps: operationStepsOf(target as { steps?: string | null }),
  }),
});
