import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'stop_erp_service',
  title: 'Stop an ERP service',
  description: 'Stops a service or copy; it keeps its data and port.',
  permission: 'services:operate',
  approvable: { queues: 'stop' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/stop', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'stop_erp_service', input, 'stop')),
});
