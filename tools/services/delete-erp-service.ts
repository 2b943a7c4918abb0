import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'delete_erp_service',
  title: 'Delete an ERP service',
  description: 'Deletes a service or copy with its data and copies. Irreversible: back up first.',
  permission: 'services:write',
  approvable: { queues: 'delete' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'DELETE', path: '/api/service-erp/{service_id}', status: 202 },
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'delete_erp_service', input, 'delete')),
});
