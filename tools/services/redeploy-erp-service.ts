import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'redeploy_erp_service',
  title: 'Redeploy an ERP service',
  description: "Deploys a service's or copy's next revision and runs it; data is kept.",
  permission: 'services:operate',
  approvable: { queues: 'redeploy' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/redeploy', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'redeploy_erp_service', input, 'redeploy')),
});
