// A backup completed the way the engine completes one (endBackupState, which queues its off-site
// copy in the same transaction), its file `bytes` random bytes long: as large as a suite needs,
// without a service to fill first.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Kysely } from 'kysely';
import { newId, nowIso } from '../../../src/db/ids.js';
import { insertPendingBackup } from '../../../src/db/repositories/backups.js';
import type { Database } from '../../../src/db/tables.js';
import { backupFilePath } from '../../../src/engine/backup-files.js';
import { endBackupState } from '../../../src/engine/state-changes.js';
import { inWriteTransaction } from '../../../src/engine/write-transaction.js';
import { sha256OfFile } from './offsite-looks.js';

export async function completedBackup(
  db: Kysely<Database>, dataDir: string, of: { teamId: string; serviceId: string; bytes: number },
): Promise<{ id: string; sha256: string }> {
  const id = newId('bak');
  await insertPendingBackup(db, { id, teamId: of.teamId, serviceId: of.serviceId, kind: 'manual', operationId: null as unknown as string, at: nowIso() });
  const file = backupFilePath(dataDir, of.serviceId, id);
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  try {
    for (let left = of.bytes; left > 0; left -= 1024 * 1024) writeSync(fd, randomBytes(Math.min(left, 1024 * 1024)));
  } finally {
    closeSync(fd);
  }
  const sha256 = await sha256OfFile(file);
  await inWriteTransaction(db, (trx) => endBackupState(trx, id, { state: 'completed', filePath: file, sizeBytes: of.bytes, sha256, at: nowIso() }));
  return { id, sha256 };
}
