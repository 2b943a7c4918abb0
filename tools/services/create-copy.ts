import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestCopy } from '../../src/engine/requests/copies.js';
import { DisplayName, OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_copy',
  title: 'Create a copy of an ERP service',
  description:
    'Copies an ERP service\'s live data to a staging duplicate on its server, stopped; its mail is caught, never sent. The operation\'s service_id is the copy.',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({
    service_id: ServiceId,
    name: DisplayName.optional().describe('Default: the service\'s name with "(copy)".'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/copies', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestCopy(context, 'create_copy', input)),
});
