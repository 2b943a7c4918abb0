import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestCopy } from '../../src/engine/requests/copies.js';
import { DisplayName, OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_copy',
  title: 'Create a copy of an ERP service',
  description:
    'Creates a copy (a staging duplicate) of an ERP service from its current database: a consistent snapshot, taken ' +
    'even while the service runs, which the service does not notice. The copy runs on the same server, is listed ' +
    'under the service (list_erp_service_copies) and is started, stopped, redeployed, backed up and deleted like any ' +
    'service. Its outgoing mail never leaves: it is kept by its mail catcher (list_caught_emails), whatever its ' +
    'settings say. Answers at once with the operation, whose service_id is the new copy; when it has succeeded the ' +
    'copy exists, stopped: start it with start_erp_service. Copying a copy makes another copy of the same service. ' +
    'Refused (409) while the service is being created, copied, restored or deleted, or when its server is full.',
  permission: 'services:write',
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({
    service_id: ServiceId.describe('The ERP service (or copy) to copy'),
    name: DisplayName.optional().describe('A name for the copy; by default the service\'s name with "(copy)".'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/copies', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestCopy(context, 'create_copy', input)),
});
