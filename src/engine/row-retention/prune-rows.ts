// Row retention: deletes what the settings (retention-settings.ts) no longer keep, in batches
// of `batchSize` rows, each its own short write transaction, so that a request waiting for the
// write lock waits at most one batch, however much there is to delete. One node at a time
// prunes (a maintenance lease); the others skip the pass.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/tables.js';
import { holdMaintenanceLease, releaseMaintenanceLease } from '../../db/repositories/maintenance-leases.js';
import {
  deleteAuditBefore, deleteDispatchedEventsBefore, deleteEndedDeliveriesBefore, deleteFinishedOperationsBefore,
} from '../../db/repositories/row-retention.js';
import { inWriteTransaction } from '../write-transaction.js';
import { rowRetentionInForce, type RowRetentionDays } from './retention-settings.js';

export const ROW_RETENTION_LEASE = 'row-retention';

export interface PruneRowsOptions {
  /** This pass's lease owner (a node's worker owner). */
  owner: string;
  now: number;
  /** The environment's (or default) days; the operator's settings in the database win. */
  fallback: RowRetentionDays;
  batchSize?: number;
  /** How long the lease lasts without renewal (renewed at every batch). */
  leaseMs?: number;
}

export interface PruneCounts {
  audit: number;
  webhook_deliveries: number;
  events: number;
  operations: number;
  /** False when another node held the lease: this pass deleted nothing. */
  ran: boolean;
}

const DAY = 86_400_000;

export async function pruneRows(db: Db, options: PruneRowsOptions): Promise<PruneCounts> {
  const counts: PruneCounts = { audit: 0, webhook_deliveries: 0, events: 0, operations: 0, ran: false };
  const batch = options.batchSize ?? 500;
  const leaseMs = options.leaseMs ?? 60_000;
  const hold = () => {
    const now = Date.now();
    return holdMaintenanceLease(db.kysely, ROW_RETENTION_LEASE, options.owner, new Date(now).toISOString(), new Date(now + leaseMs).toISOString());
  };
  if (!(await hold())) return counts;
  counts.ran = true;
  try {
    const days = await rowRetentionInForce(db.kysely, options.fallback);
    const cutoff = (kept: number) => new Date(options.now - kept * DAY).toISOString();
    const inBatches = async (work: (trx: Kysely<Database>) => Promise<number>): Promise<number> => {
      let total = 0;
      for (;;) {
        const deleted = await inWriteTransaction(db.kysely, work);
        total += deleted;
        if (deleted < batch || !(await hold())) return total;
        // Between batches, whoever waits for the write lock gets it.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    counts.audit = await inBatches((trx) => deleteAuditBefore(trx, cutoff(days.audit), batch));
    counts.webhook_deliveries = await inBatches((trx) => deleteEndedDeliveriesBefore(trx, cutoff(days.webhooks), batch));
    counts.events = await inBatches((trx) => deleteDispatchedEventsBefore(trx, cutoff(days.webhooks), batch));
    counts.operations = await inBatches((trx) => deleteFinishedOperationsBefore(trx, cutoff(days.operations), batch));
  } finally {
    await releaseMaintenanceLease(db.kysely, ROW_RETENTION_LEASE, options.owner);
  }
  return counts;
}
