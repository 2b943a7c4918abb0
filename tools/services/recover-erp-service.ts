import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestRecover } from '../../src/engine/requests/recovery.js';
import { OperationView, ServerId, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'recover_erp_service',
  title: 'Recover an ERP service',
  description: "Remakes a lost server's service elsewhere from its newest off-site backup and starts it; " +
    'result.data_as_of dates its data.',
  permission: 'backups:restore',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({
    service_id: ServiceId(),
    server_id: ServerId().describe('Ready, of the lost server\'s kind.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/recover', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestRecover(context, 'recover_erp_service', input)),
});
