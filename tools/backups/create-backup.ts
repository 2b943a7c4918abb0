import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestBackup } from '../../src/engine/requests/backups.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_backup',
  title: 'Back up an ERP service',
  description: 'Backs up a service or copy while it runs; the operation gives the backup_id.',
  permission: 'backups:create',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/backups', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestBackup(context, 'create_backup', input)),
});
