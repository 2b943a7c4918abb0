import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestCopy } from '../../src/engine/requests/copies.js';
import { DisplayName, OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_copy',
  title: 'Copy an ERP service',
  description: 'A stopped staging copy of a service and its data, mail caught; the operation gives its service_id.',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({
    service_id: ServiceId(),
    name: DisplayName().optional().describe("Default: the service's name with (copy)."),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/copies', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestCopy(context, 'create_copy', input)),
});
