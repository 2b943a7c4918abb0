// Long actions over MCP: an assistant cannot poll as easily as a script, so a tool that queued
// an operation waits for it to end, sending progress notifications when the client asked for
// them, and returns the operation. After the time limit it returns the operation as it stands
// (still queued or running, with its id) so the assistant can look again with get_operation.
import { findOperation } from '../db/repositories/operations.js';
import type { Db } from '../db/connect.js';
import { operationView } from '../../tools/views.js';

export interface WaitOptions {
  timeoutMs: number;
  pollMs: number;
  /** Called when the state changes; `step` counts changes seen, for progress notifications. */
  onChange?: (state: string, step: number) => Promise<void>;
}

export function waitOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<WaitOptions, 'timeoutMs' | 'pollMs'> {
  const seconds = Number(env.TEAMINFRA_MCP_WAIT_SECONDS ?? 60);
  return { timeoutMs: (Number.isFinite(seconds) && seconds >= 0 ? seconds : 60) * 1000, pollMs: 100 };
}

export function isQueuedOperation(output: unknown): output is { id: string; state: string } {
  const candidate = output as { id?: unknown; state?: unknown } | null;
  return typeof candidate?.id === 'string' && candidate.id.startsWith('op_') && typeof candidate.state === 'string';
}

const ENDED = new Set(['succeeded', 'failed']);

export async function awaitOperation(db: Db, operation: { id: string; state: string }, options: WaitOptions): Promise<unknown> {
  const deadline = Date.now() + options.timeoutMs;
  let state = operation.state;
  let step = 0;
  let latest: unknown = operation;
  while (!ENDED.has(state) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    const row = await findOperation(db.kysely, operation.id);
    if (!row) break;
    latest = operationView(row);
    if (row.state !== state) {
      state = row.state;
      step += 1;
      await options.onChange?.(state, step);
    }
  }
  return latest;
}
