import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { listBackupsOfService } from '../../src/db/repositories/backups.js';
import { offsiteCopiesOf } from '../../src/db/repositories/offsite-copies.js';
import { toPage } from '../../src/db/pagination.js';
import { BackupView, PageInput, pageOf, ServiceId } from '../schemas.js';
import { backupView } from '../views.js';

export default defineCapability({
  name: 'list_backups',
  title: "List a service's backups",
  description: 'The backups of a service or copy.',
  permission: 'backups:read',
  target: { kind: 'service', from: 'service_id' },
  input: () => z.strictObject({ service_id: ServiceId(), ...PageInput() }),
  output: () => pageOf(BackupView()),
  http: { method: 'GET', path: '/api/service-erp/{service_id}/backups', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (input, { db }) => {
    const rows = await listBackupsOfService(db.kysely, input.service_id, input);
    const offsite = new Map((await offsiteCopiesOf(db.kysely, rows.map((row) => row.id))).map((copy) => [copy.backup_id, copy]));
    return toPage(rows, input.limit, (row) => backupView(row, offsite.get(row.id)));
  },
});
