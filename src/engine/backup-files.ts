// Where the control plane keeps backup files (under its data directory, one folder per service),
// and how a backup file's name tells its compression. Loads no compression code: the download
// capability needs only the name, and the stdio MCP server loads every capability at start.
import { join } from 'node:path';

/** zstd since backups moved to it (backup-compression.ts); gzip for the backups taken before. */
export type BackupCompression = 'zstd' | 'gzip';

export const BACKUP_MEDIA_TYPES: Record<BackupCompression, string> = { zstd: 'application/zstd', gzip: 'application/gzip' };
export const BACKUP_EXTENSIONS: Record<BackupCompression, string> = { zstd: '.zst', gzip: '.gz' };

export function backupFilePath(dataDir: string, serviceId: string, backupId: string): string {
  return join(dataDir, 'backups', serviceId, `${backupId}.sqlite${BACKUP_EXTENSIONS.zstd}`);
}

/** The compression a backup's stored path names (a local file, or an engine path with its `?image=` query). */
export function compressionOfBackupPath(path: string): BackupCompression {
  return path.split('?')[0]?.endsWith(BACKUP_EXTENSIONS.gzip) ? 'gzip' : 'zstd';
}
