import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestMoveRollback } from '../../src/engine/requests/moves.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'rollback_erp_service_move',
  title: 'Roll back a move',
  description: 'Moves a service back, with its current data, to the server it left.',
  permission: 'services:write',
  approvable: { queues: 'move' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/move/rollback', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestMoveRollback(context, 'rollback_erp_service_move', input)),
});
