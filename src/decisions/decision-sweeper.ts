// Ends what time ends: a pending decision past its expiry becomes expired (decision.expired) and
// the operation awaiting it fails. It also finishes what a crash interrupted: an operation still
// awaiting a decision that has already ended is settled (carried out if approved). Every node may
// run it; each change is a compare-and-set, so two nodes never expire or settle the same thing twice.
import type { ApprovalDeps } from '../core/capability.js';
import { writeDecisionEvent } from './decision-events.js';
import { closeDecision, findDecision, listOverdueDecisions } from '../db/repositories/decisions.js';
import { nowIso } from '../db/ids.js';
import { inWriteTransaction } from '../engine/write-transaction.js';

export const SWEEP_INTERVAL_MS = 5_000;
const BATCH = 100;

export class DecisionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: ApprovalDeps, private readonly intervalMs = SWEEP_INTERVAL_MS) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => { void this.sweepOnce(); }, this.intervalMs);
    this.timer.unref();
    void this.sweepOnce();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass; a pass already under way is joined rather than doubled. */
  sweepOnce(): Promise<void> {
    this.running ??= this.sweep()
      .catch((error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'decision sweep failed', reason: String(error) })))
      .finally(() => { this.running = undefined; });
    return this.running;
  }

  private async sweep(): Promise<void> {
    const db = this.deps.db.kysely;
    const now = nowIso();
    for (const overdue of await listOverdueDecisions(db, now, BATCH)) {
      await inWriteTransaction(db, async (trx) => {
        const won = await closeDecision(trx, overdue.id, {
          state: 'expired', answer: null, answered_by_type: null, answered_by_id: null, answered_channel: null, answered_at: null,
        }, null);
        if (won) await writeDecisionEvent(trx, 'decision.expired', (await findDecision(trx, overdue.id))!, now);
      });
    }
    const waiting = await db.selectFrom('operations as o').innerJoin('decisions as d', 'd.id', 'o.decision_id')
      .select('o.id').where('o.state', '=', 'awaiting_approval').where('d.state', '!=', 'pending').orderBy('o.id').limit(BATCH).execute();
    for (const operation of waiting) await this.deps.approvals.settle(this.deps, operation.id);
  }
}
