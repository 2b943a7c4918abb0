import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'start_erp_service',
  title: 'Start an ERP service',
  description: 'Starts a service or copy; once it succeeds, its url answers.',
  permission: 'services:operate',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/start', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'start_erp_service', input, 'start')),
});
