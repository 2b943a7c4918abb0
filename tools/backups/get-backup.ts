import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { BackupId, BackupView } from '../schemas.js';
import { backupView } from '../views.js';
import { findOffsiteCopy } from '../../src/db/repositories/offsite-copies.js';

export default defineCapability({
  name: 'get_backup',
  title: 'Get a backup',
  description: 'A backup: service, state, size, SHA-256, and where it is kept.',
  permission: 'backups:read',
  target: { kind: 'backup', from: 'backup_id' },
  input: () => z.strictObject({ backup_id: BackupId() }),
  output: BackupView,
  http: { method: 'GET', path: '/api/backups/{backup_id}', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found'],
  run: async (_input, { db, target }) => {
    const backup = target as Parameters<typeof backupView>[0];
    return backupView(backup, await findOffsiteCopy(db.kysely, backup.id));
  },
});
