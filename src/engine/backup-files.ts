// Where the control plane keeps backup files: under its data directory, one folder per service.
import { join } from 'node:path';

export function backupFilePath(dataDir: string, serviceId: string, backupId: string): string {
  return join(dataDir, 'backups', serviceId, `${backupId}.sqlite.gz`);
}
