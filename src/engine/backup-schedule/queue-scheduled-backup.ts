// Queues a scheduled backup: the same operation and pending backup row create_backup queues,
// asked by no token (channel "scheduler"), dated by the scheduler's clock, of kind "scheduled".
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { newId } from '../../db/ids.js';
import { insertPendingBackup } from '../../db/repositories/backups.js';
import { insertOperation } from '../../db/repositories/operations.js';
import { recordOperationState } from '../state-changes.js';

export async function queueScheduledBackup(
  trx: Kysely<Database>, service: { id: string; team_id: string; server_id: string }, backupId: string, at: string,
): Promise<void> {
  const operationId = newId('op');
  const operation = await insertOperation(trx, {
    kind: 'backup', teamId: service.team_id, serviceId: service.id, serverId: service.server_id, parameters: { backup_id: backupId },
    tokenId: null, channel: 'scheduler', idempotencyKey: null, fingerprint: null,
  }, operationId, at);
  await insertPendingBackup(trx, { id: backupId, teamId: service.team_id, serviceId: service.id, kind: 'scheduled', operationId, at });
  await recordOperationState(trx, operation, 'queued', null, at);
}
