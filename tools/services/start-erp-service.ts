import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestServiceAction } from '../../src/engine/requests/service-actions.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'start_erp_service',
  title: 'Start an ERP service',
  description:
    'Starts an ERP service or copy. Returns the operation: the REST API answers at once (follow it with ' +
    'get_operation), the MCP tool waits until it ends (or returns it, with its id, after a time limit). ' +
    'It ends succeeded (the service is running and its url answers) or failed (with the reason). ' +
    'Starting a running service succeeds without restarting it. Refused with 409 while another operation ' +
    'on the service is in progress.',
  permission: 'services:operate',
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({ service_id: ServiceId }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/start', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestServiceAction(context, 'start_erp_service', input, 'start')),
});
