import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { backupsTheChangeWouldRemove, writeSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { BackupScheduleFields, BackupScheduleView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'set_backup_schedule',
  title: 'Set a backup schedule',
  description: 'Sets when a service backs itself up and how many scheduled backups it keeps; pruning existing ones also ' +
    'needs backups:delete.',
  permission: 'backups:create',
  // Raising or keeping retention loses nothing; lowering it so that backups that exist now would
  // go removes them for good at the next retention pass.
  destructiveWhen: {
    permission: 'backups:delete',
    applies: async ({ service_id: serviceId, ...schedule }, { db }) =>
      (await backupsTheChangeWouldRemove(db.kysely, serviceId, schedule, Date.now())).length > 0,
  },
  approvable: { heldAs: 'set_backup_schedule' },
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), ...BackupScheduleFields() }),
  output: BackupScheduleView,
  http: { method: 'PUT', path: '/api/service-erp/{service_id}/backup-schedule', status: 200 },
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async ({ service_id: serviceId, ...schedule }, { db, actor, approvedOperationId }) =>
    writeSchedule(db.kysely, serviceId, schedule, Date.now(), { by: actor.userId === undefined ? { type: 'token', id: actor.tokenId } : { type: 'user', id: actor.userId }, approvedOperationId }),
});
