import { existsSync } from 'node:fs';
import { z } from 'zod';
import { defineCapability, type CapabilityContext, type FileSource } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { downloadLink, DownloadView } from '../downloads.js';
import { BackupId } from '../schemas.js';
import { isEngineBackupPath } from '../../src/engine/docker/engine-backup-path.js';
import { BACKUP_EXTENSIONS, BACKUP_MEDIA_TYPES, compressionOfBackupPath } from '../../src/engine/backup-files.js';

type BackupRow = { id: string; state: string; file_path: string | null; size_bytes: number | null; sha256: string | null };

function completedBackup(context: CapabilityContext): BackupRow & { file_path: string; size_bytes: number } {
  const backup = context.target as BackupRow;
  if (backup.state !== 'completed' || backup.file_path === null || backup.size_bytes === null) {
    throw new AppError('conflict', `Backup ${backup.id} is ${backup.state}: only a completed backup can be downloaded.`);
  }
  return backup as BackupRow & { file_path: string; size_bytes: number };
}

/**
 * A local service's backup is a file here; a Docker service's is kept on its engine, and the node
 * that serves the download fetches it then (src/http/file-contents.ts), so a link works on any node.
 */
function backupFile(context: CapabilityContext): FileSource {
  const backup = completedBackup(context);
  const onEngine = isEngineBackupPath(backup.file_path);
  if (!onEngine && !existsSync(backup.file_path)) throw new AppError('conflict', `The file of backup ${backup.id} is no longer on the server.`);
  // Backups are zstd; those taken before zstd keep their gzip, and are named and typed as such.
  const compression = compressionOfBackupPath(backup.file_path);
  return {
    path: backup.file_path, filename: `${backup.id}${onEngine ? '.tar' : '.sqlite'}${BACKUP_EXTENSIONS[compression]}`,
    contentType: BACKUP_MEDIA_TYPES[compression], sizeBytes: backup.size_bytes, sha256: backup.sha256,
  };
}

export default defineCapability({
  name: 'download_backup',
  title: 'Download a backup',
  description: 'The backup file (zstd; gzip if old); over MCP a single-use link for 5 minutes. Check its sha256.',
  permission: 'backups:download',
  target: { kind: 'backup', from: 'backup_id' },
  input: () => z.strictObject({ backup_id: BackupId() }),
  output: DownloadView,
  http: { method: 'GET', path: '/api/backups/{backup_id}/download', status: 200, produces: [BACKUP_MEDIA_TYPES.zstd, BACKUP_MEDIA_TYPES.gzip] },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: ['validation_failed', 'not_found', 'conflict'],
  // A read of a whole database: each download is a row of the activity trail (over MCP, the link's use).
  recordedRead: true,
  run: async ({ backup_id: backupId }, context) =>
    downloadLink(context, backupFile(context), { action: 'download_backup', target: { type: 'backup', id: backupId } }),
  download: async (_input, context) => backupFile(context),
});
