import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { writeSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { BackupScheduleFields, BackupScheduleView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'set_backup_schedule',
  title: 'Set a backup schedule',
  description: 'Sets when a service backs itself up and how many of those backups it keeps (manual and safety ones are never pruned).',
  permission: 'backups:create',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), ...BackupScheduleFields() }),
  output: BackupScheduleView,
  http: { method: 'PUT', path: '/api/service-erp/{service_id}/backup-schedule', status: 200 },
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async ({ service_id: serviceId, ...schedule }, { db }) => writeSchedule(db.kysely, serviceId, schedule, Date.now()),
});
