// A decision asked over MCP (request_decision) waits for its answer, as a long action waits for
// its end (await-operation.ts): the assistant gets the answer in the same call. A person may take
// a while, so a client that asked for progress also hears every `heartbeatMs` (15 seconds) that the question is
// still open (which keeps clients that reset their timeout on progress waiting). After the time
// limit the decision is returned still pending, with its id, for get_decision later.
import { findDecision } from '../db/repositories/decisions.js';
import type { Db } from '../db/connect.js';
import { decisionView } from '../../tools/views.js';
import { decisionStateAt } from '../decisions/decision-state.js';
import type { WaitOptions } from './await-operation.js';

export function isPendingDecision(output: unknown): output is { id: string; state: string } {
  const candidate = output as { id?: unknown; state?: unknown } | null;
  return typeof candidate?.id === 'string' && candidate.id.startsWith('dec_') && candidate.state === 'pending';
}

export async function awaitDecision(db: Db, decision: { id: string; state: string }, options: WaitOptions): Promise<unknown> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let latest = decision as unknown as Record<string, unknown>;
  let step = 0;
  let lastHeard = started;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    const row = await findDecision(db.kysely, decision.id);
    if (!row) break;
    latest = decisionView(row) as unknown as Record<string, unknown>;
    const state = decisionStateAt(row);
    if (state !== 'pending') {
      await options.onChange?.(state, ++step, latest);
      break;
    }
    if (Date.now() - lastHeard >= options.heartbeatMs) {
      lastHeard = Date.now();
      await options.onChange?.('pending', ++step, latest);
    }
  }
  return latest;
}
