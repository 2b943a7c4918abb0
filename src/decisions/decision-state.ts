// What state a decision is in when it is read. The sweeper (decision-sweeper.ts) closes overdue
// decisions in batches, so after a burst a row can stay `pending` for a while past its expiry,
// while answering it is already refused as expired (answering.ts). Every read goes through this
// rule instead, so that the API, MCP (and its tasks) and the panel say `expired` the moment a
// decision expires, whatever the sweeper's backlog.
import type { DecisionState } from '../db/tables.js';
import { nowIso } from '../db/ids.js';

export function decisionStateAt(row: { state: DecisionState; expires_at: string }, now: string = nowIso()): DecisionState {
  return row.state === 'pending' && row.expires_at <= now ? 'expired' : row.state;
}
