import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestBackup } from '../../src/engine/requests/backups.js';
import { OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'create_backup',
  title: 'Back up an ERP service',
  description:
    'Backs up the whole database of an ERP service or copy: a consistent snapshot (SQLite online backup, taken while ' +
    'the service keeps running), zstd-compressed, with its SHA-256 checksum. Answers at once with the operation; its ' +
    'backup_id names the new backup, pending until the operation ends, then completed (with size and checksum) or ' +
    'failed (with the reason). Refused (409) while another operation on the service is in progress.',
  permission: 'backups:create',
  target: { kind: 'service', from: 'service_id' },
  input: z.strictObject({ service_id: ServiceId }),
  output: OperationView,
  http: { method: 'POST', path: '/api/service-erp/{service_id}/backups', status: 202 },
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestBackup(context, 'create_backup', input)),
});
