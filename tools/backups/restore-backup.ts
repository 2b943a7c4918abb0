import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { requestRestore } from '../../src/engine/requests/backups.js';
import { BackupId, OperationView, ServiceId } from '../schemas.js';
import { operationView } from '../views.js';

export default defineCapability({
  name: 'restore_backup',
  title: 'Restore a backup',
  description:
    'Replaces the whole database of the service the backup was taken of, or of one of its copies (target_service_id), ' +
    'with the backup. Before anything changes, the backup is verified (SHA-256 checksum, then SQLite\'s integrity ' +
    'check); a bad backup fails the operation with the reason and changes nothing. Then the service is stopped, a ' +
    'safety backup of its current data is taken (kind "safety", listed with its backups), the database is swapped ' +
    'atomically and the service is started again if it was running. Data written since the backup is lost, except ' +
    'in the safety backup. Answers at once with the operation; the service shows "restoring" until it ends. Refused ' +
    '(409) while another operation on the target is in progress.',
  permission: 'backups:restore',
  approvable: { queues: 'restore' },
  target: { kind: 'backup', from: 'backup_id' },
  input: z.strictObject({
    backup_id: BackupId,
    target_service_id: ServiceId.optional()
      .describe('Where to restore: the service the backup was taken of (the default) or one of its copies.'),
  }),
  output: OperationView,
  http: { method: 'POST', path: '/api/backups/{backup_id}/restore', status: 202 },
  hints: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  run: async (input, context) => operationView(await requestRestore(context, 'restore_backup', input)),
});
