import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestRecover } from '../../src/engine/requests/recovery.js';
import { OperationView, ServerId, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'recover_erp_service',
  title: 'Recover an ERP service on another server',
  description: "Makes a service whose server the operator marked lost again on another server, from its newest off-site backup, with its " +
    "secrets, copies and schedule; it is started there. The operation's result says the time of the data it came back with (data_as_of).",
  permission: 'backups:restore',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({
    service_id: ServiceId(),
    server_id: ServerId().describe('The server to make it again on: one the token reaches, ready, of the same kind as the lost one.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/recover', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestRecover(context, 'recover_erp_service', input)),
});
