import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { readSchedule } from '../../src/engine/backup-schedule/service-schedule.js';
import { BackupScheduleView, ServiceId } from '../schemas.js';

export default defineCapability({
  name: 'get_backup_schedule',
  title: 'Get a backup schedule',
  description: 'When a service backs itself up and how many of those backups it keeps.',
  permission: 'backups:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId() }),
  output: BackupScheduleView,
  http: { method: 'GET', path: '/api/service-erp/{service_id}/backup-schedule', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db }) => readSchedule(db.kysely, input.service_id, Date.now()),
});
