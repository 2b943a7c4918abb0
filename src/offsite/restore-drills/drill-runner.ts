// Runs the restore drills the scheduler (drill-schedule.ts) or the operator's command queued: on
// every tick, any node takes the drills of the servers it hosts under a lease it renews while the
// drill runs, so one node runs each drill at a time. A node killed mid-drill leaves it running
// with its lease; once that ran out (at once on the same host, where its holder is seen gone) the
// next tick takes it again, and the drill removes what the killed attempt left of its throwaway
// before it begins anew; after maxAttempts interruptions it is given up, its throwaway removed.
// Each drill ends with backup.verified or backup.verify_failed and the backup's verified_at or
// verify_reason, written only while this runner still holds it.
import type { Db } from '../../db/connect.js';
import { nowIso } from '../../db/ids.js';
import { insertEvent } from '../../db/repositories/events.js';
import {
  drillsNotEnded, queueDrillsOfTeam, renewDrillLease, takeDrillLease, type QueuedDrill, type RestoreDrillRow,
} from '../../db/repositories/restore-drills.js';
import { isLeaseOwnerGone, newLeaseOwner, retireLeaseOwner } from '../../engine/lease-owner.js';
import { PeriodicPass } from '../../engine/periodic-pass.js';
import { serviceSpecQuery, specOf } from '../../engine/service-spec.js';
import { inWriteTransaction } from '../../engine/write-transaction.js';
import { removeThrowaway, runRestoreDrill, type DrillDeps, type DrillOutcome } from './restore-drill.js';

export interface DrillRunnerOptions {
  /** How often queued drills are looked for; 0: only when tick() is called. */
  intervalMs: number;
  leaseMs: number;
  /** Attempts a drill gets before it is given up (each interruption of its node is one). */
  maxAttempts: number;
  /** This node: it runs the drills of the servers it hosts (and of those any node hosts). */
  node: string;
  onError(error: unknown, context: string): void;
}

export const DEFAULT_DRILL_RUNNER_OPTIONS = { intervalMs: 30_000, leaseMs: 60_000, maxAttempts: 3 };
const BATCH = 4;

export interface RanDrill { serviceId: string; serviceName: string; backupId: string | null; outcome: DrillOutcome | { skipped: 'no_offsite_backup' | 'under_way' } }

export class RestoreDrillRunner {
  private readonly passes: PeriodicPass<void>;
  private readonly owner = newLeaseOwner();
  private closed = false;

  constructor(private readonly db: Db, private readonly deps: Omit<DrillDeps, 'db' | 'onError'>, private readonly options: DrillRunnerOptions) {
    this.passes = new PeriodicPass(() => this.pass(), { ...options, atStart: true, what: 'running restore drills' });
  }

  start(): void {
    this.passes.start();
  }

  /** One pass over the drills due; resolves when done (one pass at a time). */
  tick(): Promise<void> {
    return this.passes.tick();
  }

  /**
   * Takes no more drills and waits up to `graceMs` for the one running; one still running then is
   * left as a crash leaves it (its lease runs out, the next start removes its throwaway and runs it again).
   */
  async close(graceMs = Infinity): Promise<void> {
    this.closed = true;
    await this.passes.stop(graceMs);
    retireLeaseOwner(this.owner);
  }

  /** The operator's command: a drill of each service of the team, run here now, one after another. */
  async runTeamNow(teamId: string): Promise<RanDrill[]> {
    const queued = await queueDrillsOfTeam(this.db.kysely, teamId, nowIso(), { owner: this.owner, until: this.leaseEnd() });
    const ran: RanDrill[] = [];
    for (const entry of queued) ran.push(await this.runQueued(entry));
    return ran;
  }

  private async runQueued(entry: QueuedDrill): Promise<RanDrill> {
    const named = { serviceId: entry.serviceId, serviceName: entry.serviceName };
    if (entry.drill === null) return { ...named, backupId: null, outcome: { skipped: entry.why } };
    return { ...named, backupId: entry.drill.backup_id, outcome: await this.runHeld(entry.drill) };
  }

  private async pass(): Promise<void> {
    while (!this.closed) {
      const due = await drillsNotEnded(this.db.kysely, BATCH);
      let taken = 0;
      for (const drill of due) {
        if (this.closed) return;
        if (!takeable(drill) || !(await this.hostedHere(drill))) continue;
        if (!(await takeDrillLease(this.db.kysely, drill, this.owner, this.leaseEnd()))) continue;
        taken += 1;
        if (drill.attempts >= this.options.maxAttempts) await this.giveUp(drill);
        else await this.runHeld(drill);
      }
      if (taken === 0 || due.length < BATCH) return;
    }
  }

  private async hostedHere(drill: RestoreDrillRow): Promise<boolean> {
    const server = await this.db.kysely.selectFrom('erp_services as s').innerJoin('servers as v', 'v.id', 's.server_id')
      .select('v.node').where('s.id', '=', drill.service_id).executeTakeFirst();
    return !server || server.node === null || server.node === this.options.node;
  }

  private async runHeld(drill: RestoreDrillRow): Promise<DrillOutcome> {
    const renewal = setInterval(() => {
      renewDrillLease(this.db.kysely, drill.id, this.owner, this.leaseEnd())
        .catch((error: unknown) => this.options.onError(error, `renewing the lease of restore drill ${drill.id}`));
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    try {
      const outcome = await runRestoreDrill({ ...this.deps, db: this.db.kysely, onError: this.options.onError }, drill);
      await this.end(drill, outcome);
      return outcome;
    } finally {
      clearInterval(renewal);
    }
  }

  private async giveUp(drill: RestoreDrillRow): Promise<void> {
    const left = await serviceSpecQuery(this.db.kysely).where('s.id', '=', drill.throwaway_id).executeTakeFirst();
    if (left) await removeThrowaway({ ...this.deps, db: this.db.kysely, onError: this.options.onError }, specOf(left));
    await this.end(drill, {
      verified: false,
      reason: `The drill was interrupted ${drill.attempts} times (the control plane stopped while running it), so it was given up; the next one runs as scheduled.`,
    });
  }

  /** Writes how the drill ended, on it and on its backup, with its event. */
  private async end(drill: RestoreDrillRow, outcome: DrillOutcome): Promise<void> {
    const at = nowIso();
    const reason = outcome.verified ? null : outcome.reason;
    await inWriteTransaction(this.db.kysely, async (trx) => {
      const updated = await trx.updateTable('restore_drills')
        .set({ state: outcome.verified ? 'verified' : 'failed', reason, ended_at: at, lease_owner: null, lease_expires_at: null })
        .where('id', '=', drill.id).where('lease_owner', '=', this.owner).executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return;
      await trx.updateTable('backups').set(outcome.verified ? { verified_at: at, verify_reason: null } : { verify_reason: reason })
        .where('id', '=', drill.backup_id).execute();
      const backup = await trx.selectFrom('backups').select('kind').where('id', '=', drill.backup_id).executeTakeFirst();
      await insertEvent(trx, {
        teamId: drill.team_id, type: outcome.verified ? 'backup.verified' : 'backup.verify_failed', at,
        data: {
          backup: { id: drill.backup_id, service_id: drill.service_id, kind: backup?.kind ?? 'manual' },
          drill: { id: drill.id, state: outcome.verified ? 'verified' : 'failed', at, reason },
        },
      });
    });
  }

  private leaseEnd(): string {
    return new Date(Date.now() + this.options.leaseMs).toISOString();
  }
}

/** Queued, run out, or held by a process of this host that is gone (a `serve` killed mid-drill): taken at once. */
function takeable(drill: RestoreDrillRow): boolean {
  return drill.lease_owner === null || drill.lease_expires_at === null || drill.lease_expires_at < nowIso() || isLeaseOwnerGone(drill.lease_owner);
}
