// The operations worker: takes queued operations (and running ones whose worker died) with a
// lease, runs up to `concurrency` at once, renews each lease while it runs, and on close stops
// taking work and waits for what it is running. Woken at once by operations queued in this
// process; polls for the rest (other processes and nodes, expired leases).
// Nodes: a worker takes only operations on servers its node hosts (a server no node hosts yet
// becomes this node's when the worker takes one of its operations), because the local driver
// runs a server's services on its host's machine. A running operation whose node stopped
// answering is failed by another node once its lease has expired (lost-node.ts).
import type { Db } from '../db/connect.js';
import {
  hostServer, listClaimCandidates, renewLease, takeLease, type CandidateRow, type OperationRow,
} from '../db/repositories/operations.js';
import { isLeaseOwnerGone, LOCAL_OWNER_PREFIX, newLeaseOwner, retireLeaseOwner } from './lease-owner.js';
import { failOperationOfLostNode } from './lost-node.js';
import { recordOperationState } from './state-changes.js';
import { onQueued } from './wake.js';
import { inClaimTransaction } from './write-transaction.js';

export interface WorkerOptions {
  /** This node's name (servers.node of the servers whose operations it runs). */
  node: string;
  leaseMs: number;
  pollMs: number;
  concurrency: number;
  onError(error: unknown, context: string): void;
}

/** Runs an operation; once `abandoned` is aborted (the process stops without waiting), it records nothing. */
export type Performer = (operation: OperationRow, owner: string, attempt: number, abandoned: AbortSignal) => Promise<void>;

interface Claim {
  operation: OperationRow;
  attempt: number;
}

export class OperationWorker {
  readonly owner = newLeaseOwner();
  private readonly active = new Map<string, Promise<void>>();
  private readonly abandon = new AbortController();
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly db: Db, private readonly perform: Performer, private readonly options: WorkerOptions) {}

  start(): void {
    this.unsubscribe = onQueued(() => void this.pump());
    this.timer = setInterval(() => void this.pump(), this.options.pollMs);
    this.timer.unref();
    void this.pump();
  }

  /**
   * Stops taking operations and waits for the running ones, at most `graceMs`: an operation
   * still running then (an engine that does not answer, a long copy) is abandoned, not failed.
   * It records nothing more, and keeps its lease, so that the next start of this node resumes
   * it (its lease owner is gone), as after a crash; another node takes it once the lease expires.
   * Answers how many were abandoned.
   */
  async close(graceMs = Number.POSITIVE_INFINITY): Promise<number> {
    this.closed = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace over'>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve('grace over'), graceMs);
    });
    const finished = (async () => {
      await this.pumping;
      await Promise.allSettled([...this.active.values()]);
    })();
    const ended = await Promise.race([finished.then(() => 'finished' as const), graceOver]);
    clearTimeout(timer);
    const abandoned = ended === 'finished' ? 0 : this.active.size;
    if (abandoned > 0) this.abandon.abort();
    else retireLeaseOwner(this.owner);
    return abandoned;
  }

  get busy(): number {
    return this.active.size;
  }

  private pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      do {
        this.pumpAgain = false;
        await this.fill().catch((error: unknown) => this.options.onError(error, 'taking operations'));
      } while (this.pumpAgain && !this.closed);
    })().finally(() => {
      this.pumping = undefined;
    });
    return this.pumping;
  }

  private async fill(): Promise<void> {
    while (!this.closed && this.active.size < this.options.concurrency) {
      const claim = await this.claimNext();
      if (!claim) return;
      const id = claim.operation.id;
      this.active.set(id, this.run(claim).finally(() => {
        this.active.delete(id);
        if (!this.closed) void this.pump();
      }));
    }
  }

  private claimNext(): Promise<Claim | undefined> {
    return inClaimTransaction(this.db.kysely, async (trx) => {
      const now = Date.now();
      const at = new Date(now).toISOString();
      const { node } = this.options;
      const candidates = await listClaimCandidates(trx, this.owner, { node, now: at, localOwnerPrefix: LOCAL_OWNER_PREFIX, limit: 20 });
      for (const seen of candidates) {
        if (this.active.has(seen.id)) continue;
        const resumed = seen.state === 'running';
        const leaseExpired = !seen.lease_owner || !seen.lease_expires_at || Date.parse(seen.lease_expires_at) <= now;
        if (seen.server_node !== null && seen.server_node !== node) {
          // Another node's operation, here only because its lease expired: that node is gone.
          if (resumed && leaseExpired) await failOperationOfLostNode(trx, seen, seen.server_node, at);
          continue;
        }
        if (resumed && !leaseExpired && !isLeaseOwnerGone(seen.lease_owner)) continue;
        // A Docker server's engine answers every node: it gets no host, and any node runs its operations.
        if (seen.server_id !== null && seen.server_node === null && seen.docker_host === null && !(await hostServer(trx, seen.server_id, node))) continue;
        if (!(await takeLease(trx, seen, this.owner, new Date(now + this.options.leaseMs).toISOString(), at))) continue;
        const operation: OperationRow = { ...rowOf(seen), state: 'running', lease_owner: this.owner, started_at: seen.started_at ?? at };
        const reason = resumed ? `Resumed: the worker running it (${seen.lease_owner ?? 'unknown'}) stopped before it finished.` : null;
        await recordOperationState(trx, operation, 'running', reason, at);
        const attempts = await trx.selectFrom('operation_transitions').select((eb) => eb.fn.countAll<number>().as('count'))
          .where('operation_id', '=', seen.id).where('state', '=', 'running').executeTakeFirstOrThrow();
        return { operation, attempt: Number(attempts.count) };
      }
      return undefined;
    });
  }

  private async run(claim: Claim): Promise<void> {
    const { operation } = claim;
    const renewal = setInterval(() => {
      renewLease(this.db.kysely, operation.id, this.owner, new Date(Date.now() + this.options.leaseMs).toISOString())
        .then((held) => {
          if (!held) this.options.onError(new Error('lease lost'), `operation ${operation.id}`);
        })
        .catch((error: unknown) => this.options.onError(error, `renewing the lease of ${operation.id}`));
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    renewal.unref();
    // Abandoned: the lease is left to expire (or to be seen as ours once this process is gone).
    const stopRenewing = () => clearInterval(renewal);
    this.abandon.signal.addEventListener('abort', stopRenewing, { once: true });
    try {
      await this.perform(operation, this.owner, claim.attempt, this.abandon.signal);
    } catch (error) {
      this.options.onError(error, `operation ${operation.id}`);
    } finally {
      clearInterval(renewal);
      this.abandon.signal.removeEventListener('abort', stopRenewing);
    }
  }
}

function rowOf(candidate: CandidateRow): OperationRow {
  const { server_node: _hostedBy, docker_host: _engine, ...row } = candidate;
  return row;
}
