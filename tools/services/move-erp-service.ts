import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestMove } from '../../src/engine/requests/moves.js';
import { OperationView, ServerId, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'move_erp_service',
  title: 'Move an ERP service',
  description: 'Moves a service with its data to another server, with a short write pause (result.write_pause_ms).',
  permission: 'services:write',
  approvable: { queues: 'move' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), server_id: ServerId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/move', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestMove(context, 'move_erp_service', input)),
});
