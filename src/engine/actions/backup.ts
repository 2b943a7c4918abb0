// Backing up a service: the driver writes the file under the data directory; the operation's
// end (perform.ts) marks the backup completed or failed with its event.
import type { ActionContext, ActionResult } from './action-types.js';
import { backupFilePath } from '../backup-files.js';
import { requireService } from './service-of-operation.js';

export function backupIdOf(parameters: string): string {
  return (JSON.parse(parameters) as { backup_id: string }).backup_id;
}

export async function backupAction({ db, driver, operation, dataDir }: ActionContext): Promise<ActionResult> {
  const spec = await requireService(db, operation);
  const backupId = backupIdOf(operation.parameters);
  const file = await driver.backup(spec, backupFilePath(dataDir, spec.id, backupId));
  return { result: { backup_id: backupId, size_bytes: file.sizeBytes, sha256: file.sha256 }, backup: { id: backupId, file } };
}
