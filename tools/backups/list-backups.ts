import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listBackupsOfService } from '../../src/db/repositories/backups.js';
import { toPage } from '../../src/db/pagination.js';
import { BackupView, PageInput, pageOf, ServiceId } from '../schemas.js';
import { backupView } from '../views.js';

export default defineCapability({
  name: 'list_backups',
  title: "List a service's backups",
  description: 'Lists the backups of a service or copy.',
  permission: 'backups:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), ...PageInput() }),
  output: () => pageOf(BackupView()),
  http: { method: 'GET', path: '/api/service-erp/{service_id}/backups', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db }) =>
    toPage(await listBackupsOfService(db.kysely, input.service_id, input), input.limit, backupView),
});
