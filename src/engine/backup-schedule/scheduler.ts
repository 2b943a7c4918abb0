// The backup scheduler: on every tick, any node may take the slots that are due. Each slot is
// taken by one compare-and-set on backup_schedules.next_run_at, in the write transaction that
// queues its backup operation (the operations worker then runs it once, under its lease), so one
// node takes each slot whatever the number of nodes, and a restart takes nothing twice. A slot
// moves to the first one after now, so slots missed while every node was down collapse into one.
// A failed scheduled backup is tried again, at most `maxAttempts` times in all, `retryDelayMs`
// apart; every failure is a backup.failed event. Each tick also takes the teams' weekly restore
// drill slots the same way (src/offsite/restore-drills/drill-schedule.ts). The clock is
// injected: tests move time.
import type { Db } from '../../db/connect.js';
import { newId } from '../../db/ids.js';
import {
  insertScheduleIfMissing, listDueSchedules, listRetriesDue, listServicesWithoutSchedule, takeRetry, takeSlot,
} from '../../db/repositories/backup-schedules.js';
import { findInFlightOperation } from '../../db/repositories/operations.js';
import { queueDueDrills } from '../../offsite/restore-drills/drill-schedule.js';
import { PeriodicPass } from '../periodic-pass.js';
import { announceQueued } from '../wake.js';
import { inWriteTransaction } from '../write-transaction.js';
import { queueScheduledBackup } from './queue-scheduled-backup.js';
import { nextSlotAfter } from './schedule-rules.js';
import { defaultScheduleOf } from './service-schedule.js';

export type Clock = () => number;

export interface SchedulerOptions {
  clock: Clock;
  /** How often due slots are looked for (the lateness of a slot at most); 0: only when tick() is called. */
  intervalMs: number;
  retryDelayMs: number;
  maxAttempts: number;
  onError(error: unknown, context: string): void;
}

export const DEFAULT_SCHEDULER_OPTIONS = { intervalMs: 30_000, retryDelayMs: 600_000, maxAttempts: 3 };

const BATCH = 100;

export interface TickResult {
  /** Backups queued for a slot, and for a retry of one. */
  queued: string[];
  /** Restore drills queued for a team's slot. */
  drills: string[];
}

export class BackupScheduler {
  private readonly passes: PeriodicPass<TickResult>;

  constructor(private readonly db: Db, private readonly options: SchedulerOptions) {
    // At once (a slot missed while every node was down is taken now), then every intervalMs.
    this.passes = new PeriodicPass(() => this.pass(), { ...options, atStart: true, what: 'taking scheduled backups' });
  }

  start(): void {
    this.passes.start();
  }

  close(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass at the clock's now; one at a time per scheduler. */
  tick(): Promise<TickResult> {
    return this.passes.tick();
  }

  private async pass(): Promise<TickResult> {
    const now = this.options.clock();
    await this.writeMissingSchedules(now);
    const queued: string[] = [];
    for (const due of await listDueSchedules(this.db.kysely, new Date(now).toISOString(), BATCH)) {
      const backupId = await this.takeSlot(due, now);
      if (backupId) queued.push(backupId);
    }
    for (const retry of await listRetriesDue(this.db.kysely, new Date(now).toISOString(), BATCH)) {
      const backupId = await this.takeRetry(retry, now);
      if (backupId) queued.push(backupId);
    }
    if (queued.length > 0) announceQueued();
    return { queued, drills: await queueDueDrills(this.db.kysely, now) };
  }

  /** A service gets its row, with its first slot after now, the first time the scheduler sees it. */
  private async writeMissingSchedules(now: number): Promise<void> {
    for (;;) {
      const services = await listServicesWithoutSchedule(this.db.kysely, BATCH);
      for (const service of services) {
        const fields = await defaultScheduleOf(this.db.kysely, service);
        const next = nextSlotAfter(fields, now, service.timezone);
        await insertScheduleIfMissing(this.db.kysely, {
          service_id: service.id, team_id: service.team_id, ...fields,
          next_run_at: next === null ? null : new Date(next).toISOString(), updated_at: new Date(now).toISOString(),
        });
      }
      if (services.length < BATCH) return;
    }
  }

  private takeSlot(due: Awaited<ReturnType<typeof listDueSchedules>>[number], now: number): Promise<string | null> {
    const at = new Date(now).toISOString();
    const slot = due.next_run_at as string;
    return inWriteTransaction(this.db.kysely, async (trx) => {
      const next = nextSlotAfter(due, now, due.timezone);
      const nextRunAt = due.deleted_at !== null || next === null ? null : new Date(next).toISOString();
      // Nothing to back up: a deleted service, whose schedule then has no next slot.
      if (due.deleted_at !== null) {
        await takeSlot(trx, due.service_id, slot, { next: nextRunAt, backupId: null, retryAt: null, at });
        return null;
      }
      // Another operation is in progress: the slot stays due, and is taken at a later tick.
      if (await this.busy(trx, due.service_id, due.parent_id)) return null;
      const backupId = newId('bak');
      const retryAt = new Date(now + this.options.retryDelayMs).toISOString();
      if (!(await takeSlot(trx, due.service_id, slot, { next: nextRunAt, backupId, retryAt, at }))) return null;
      await queueScheduledBackup(trx, { id: due.service_id, team_id: due.team_id, server_id: due.server_id }, backupId, at);
      return backupId;
    });
  }

  /** Looks again at a slot's backup: done, still running, failed to be tried again, or failed for good. */
  private takeRetry(row: Awaited<ReturnType<typeof listRetriesDue>>[number], now: number): Promise<string | null> {
    const at = new Date(now).toISOString();
    const seen = { attempts: row.attempts, retryAt: row.retry_at as string };
    return inWriteTransaction(this.db.kysely, async (trx) => {
      const settle = (retryAt: string | null) =>
        takeRetry(trx, row.service_id, seen, { attempts: row.attempts, backupId: row.current_backup_id, retryAt, at });
      if (row.deleted_at !== null || row.backup_state === 'completed' || row.backup_state === null) {
        await settle(null);
        return null;
      }
      if (row.backup_state === 'pending') {
        await settle(new Date(now + this.options.retryDelayMs).toISOString());
        return null;
      }
      if (row.attempts >= this.options.maxAttempts) {
        await settle(null);
        return null;
      }
      if (await this.busy(trx, row.service_id, null)) return null;
      const backupId = newId('bak');
      const change = { attempts: row.attempts + 1, backupId, retryAt: new Date(now + this.options.retryDelayMs).toISOString(), at };
      if (!(await takeRetry(trx, row.service_id, seen, change))) return null;
      await queueScheduledBackup(trx, { id: row.service_id, team_id: row.team_id, server_id: row.server_id }, backupId, at);
      return backupId;
    });
  }

  private async busy(trx: Parameters<typeof findInFlightOperation>[0], serviceId: string, parentId: string | null): Promise<boolean> {
    if (await findInFlightOperation(trx, { serviceId })) return true;
    const parentBusy = parentId ? await findInFlightOperation(trx, { serviceId: parentId }) : undefined;
    return parentBusy?.kind === 'delete';
  }
}
