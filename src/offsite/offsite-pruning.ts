// Retention in the store too: once retention removed a backup's row (backup-retention.ts, by the
// same schedule rules as on the server), its off-site object is deleted, then its copy's row; a
// replaced destination goes once nothing is kept there. An object that cannot be deleted now
// (store unreachable) keeps its row, and the next pass tries again. A backup whose server copy
// is gone keeps its row, so its off-site copy stays for as long as retention keeps the backup.
import type { Kysely } from 'kysely';
import { deleteUnusedReplacedDestinations } from '../db/repositories/backup-destinations.js';
import { deleteOffsiteCopy, orphanedOffsiteCopies } from '../db/repositories/offsite-copies.js';
import type { Database } from '../db/tables.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { openDestination } from './destinations.js';
import { ObjectStore } from './object-store.js';

const BATCH = 100;

export async function pruneOffsiteCopies(db: Kysely<Database>, secrets: SecretBox, onError: (error: unknown, context: string) => void): Promise<number> {
  const orphans = await orphanedOffsiteCopies(db, BATCH);
  let removed = 0;
  const stores = new Map<string, ObjectStore>();
  // A store that failed once is left for this pass: one log line per store, not one per object.
  const unreachable = new Set<string>();
  try {
    for (const copy of orphans) {
      if (unreachable.has(copy.destination_id)) continue;
      try {
        // A failed copy never completed an upload; a pending one may have left parts.
        if (copy.state !== 'failed') {
          let store = stores.get(copy.destination_id);
          if (!store) {
            store = await ObjectStore.open(await openDestination(db, secrets, copy.destination_id));
            stores.set(copy.destination_id, store);
          }
          await store.abandonUnfinished(copy.object_key);
          await store.remove(copy.object_key);
        }
        await deleteOffsiteCopy(db, copy.backup_id);
        removed += 1;
      } catch (error) {
        unreachable.add(copy.destination_id);
        onError(error, `removing the off-site copy of backup ${copy.backup_id}`);
      }
    }
  } finally {
    for (const store of stores.values()) store.close();
  }
  if (removed > 0) await deleteUnusedReplacedDestinations(db);
  return removed;
}
