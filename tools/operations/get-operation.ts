import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { OperationId, OperationView } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'get_operation',
  title: 'Get an operation',
  description:
    'Shows one long action and its state (queued, running, succeeded, failed with a reason). Poll it until it ends.',
  permission: 'services:read',
  readableByRequester: true,
  target: { kind: 'operation', from: 'operation_id' },
  input: z.strictObject({ operation_id: OperationId }),
  output: OperationView,
  http: { method: 'GET', path: '/api/operations/{operation_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { target, actor, secrets }) => operationView(target as Parameters<typeof operationView>[0], { tokenId: actor.tokenId, secrets }),
});
