import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'delete_erp_service',
  title: 'Delete an ERP service',
  description:
    'Deletes an ERP service or copy: stops it and removes its files and database. Deleting an ERP service ' +
    'also deletes its copies (a copy cannot outlive the service it copies). This cannot be undone; take a ' +
    'backup first if the data matters. Returns the operation: the REST API answers at once (follow it ' +
    'with get_operation), the MCP tool waits until it ends (or returns it, with its id, after a time ' +
    'limit). Refused with 409 while another operation on the service or one of its copies is in progress.',
  permission: 'services:write',
  approvable: { queues: 'delete' },
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({ service_id: ServiceId }),
  output: OperationView,
  http: { method: 'DELETE', path: '/api/service-erp/{service_id}', status: 202 },
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'delete_erp_service', input, 'delete')),
});
