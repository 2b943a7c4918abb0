// This node's sign of life, and what it concludes about nodes that give none. Every few seconds
// the node marks itself seen (the nodes table); operations queued for another node that has not
// been seen for `goneAfterMs` (TEAMINFRA_NODE_GONE_MS), and that have waited that long, are failed
// with a reason naming it (lost-node.ts): without this they would wait for a node that may never
// come back. A node never fails its own queue: alone on SQLite, its operations wait for it.
import type { Db } from '../db/connect.js';
import { nowIso } from '../db/ids.js';
import { listQueuedForUnseenNodes, markNodeSeen } from '../db/repositories/nodes.js';
import { failOperationQueuedForLostNode } from './lost-node.js';
import { inWriteTransaction } from './write-transaction.js';

export interface NodeHeartbeatOptions {
  node: string;
  /** How long a node may go unseen before the operations queued for it are failed. */
  goneAfterMs: number;
  /** How often this node marks itself seen; well under `goneAfterMs`. */
  intervalMs: number;
  onError(error: unknown, context: string): void;
}

export class NodeHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(private readonly db: Db, private readonly options: NodeHeartbeatOptions) {}

  /** Marks this node seen at once (so that it is never taken for gone while it starts), then every interval. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating;
  }

  private async beat(): Promise<void> {
    try {
      await markNodeSeen(this.db.kysely, this.options.node, nowIso());
      await this.failOperationsQueuedForGoneNodes();
    } catch (error) {
      this.options.onError(error, 'marking this node seen');
    }
  }

  private async failOperationsQueuedForGoneNodes(): Promise<void> {
    const { node, goneAfterMs } = this.options;
    const before = new Date(Date.now() - goneAfterMs).toISOString();
    const abandoned = await listQueuedForUnseenNodes(this.db.kysely, { node, before, limit: 50 });
    for (const queued of abandoned) {
      await inWriteTransaction(this.db.kysely, (trx) => failOperationQueuedForLostNode(trx, queued, goneAfterMs, before, nowIso()));
    }
  }
}
