import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestRestore } from '../../src/engine/requests/backups.js';
import { BackupId, OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'restore_backup',
  title: 'Restore a backup',
  description: 'Restores a verified backup into its service or a copy, after a safety backup.',
  permission: 'backups:restore',
  approvable: { queues: 'restore' },
  target: { kind: 'backup', from: 'backup_id' },
  input: () => z.strictObject({
    backup_id: BackupId(),
    target_service_id: ServiceId().optional()
      .describe('A copy to restore into instead.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/backups/{backup_id}/restore', status: 202 },
  hints: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestRestore(context, 'restore_backup', input)),
});
