// Long actions over MCP: an assistant cannot poll as easily as a script, so a tool that queued
// an operation waits for it to end, sending progress notifications when the client asked for
// them, and returns the operation. After the time limit it returns the operation as it stands
// (still queued or running, with its id) so the assistant can look again with get_operation.
// An action held for approval may wait on a person for long: the client hears at once which
// decision it waits for, and every `heartbeatMs` that it still waits (a client that resets its
// timeout on progress then keeps waiting).
import { findOperation } from '../db/repositories/operations.js';
import type { Db } from '../db/connect.js';
import { operationView } from '../../tools/views.js';
import { operationAnswer } from '../../tools/operations/operation-answer.js';
import type { CredentialsReader } from '../engine/apps/initial-credentials-once.js';

export interface WaitOptions {
  timeoutMs: number;
  pollMs: number;
  /** How long without a change before the client hears again that the wait goes on. */
  heartbeatMs: number;
  /**
   * Called when the state changes, when an action is held for approval (at once), and at each
   * heartbeat; `step` counts the calls, for progress notifications; `latest` is the view as read.
   */
  onChange?: (state: string, step: number, latest: Record<string, unknown>) => Promise<void>;
}

// The default wait ends before the official SDK clients' default request timeout (60 s), so that
// a client that set none gets the operation as it stands rather than a timeout error.
const DEFAULT_WAIT_SECONDS = 50;
const DEFAULT_HEARTBEAT_SECONDS = 15;

export function waitOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<WaitOptions, 'timeoutMs' | 'pollMs' | 'heartbeatMs'> {
  const seconds = (name: string, fallback: number, least: number) => {
    const value = Number(env[name] ?? fallback);
    return (Number.isFinite(value) && value >= least ? value : fallback) * 1000;
  };
  return {
    timeoutMs: seconds('TEAMINFRA_MCP_WAIT_SECONDS', DEFAULT_WAIT_SECONDS, 0),
    heartbeatMs: seconds('TEAMINFRA_MCP_HEARTBEAT_SECONDS', DEFAULT_HEARTBEAT_SECONDS, 1),
    pollMs: 100,
  };
}

export function isQueuedOperation(output: unknown): output is { id: string; state: string } {
  const candidate = output as { id?: unknown; state?: unknown } | null;
  return typeof candidate?.id === 'string' && candidate.id.startsWith('op_') && typeof candidate.state === 'string';
}

const ENDED = new Set(['succeeded', 'failed']);

/**
 * `reader`: the token that asked, when this answer is its own: the operation it returns, if it
 * ended succeeded, is the first to show it and carries a created service's initial credentials
 * (tools/operations/operation-answer.ts). Progress notifications never carry them.
 */
export async function awaitOperation(db: Db, operation: { id: string; state: string }, options: WaitOptions, reader?: CredentialsReader): Promise<unknown> {
  const deadline = Date.now() + options.timeoutMs;
  let state = operation.state;
  let step = 0;
  let latest = operation as unknown as Record<string, unknown>;
  let lastHeard = Date.now();
  const tell = async (now: string) => {
    lastHeard = Date.now();
    await options.onChange?.(now, ++step, latest);
  };
  if (state === 'awaiting_approval') await tell(state);
  while (!ENDED.has(state) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    const row = await findOperation(db.kysely, operation.id);
    if (!row) break;
    latest = operationView(row, reader) as unknown as Record<string, unknown>;
    if (row.state !== state) {
      state = row.state;
      await tell(state);
    } else if (Date.now() - lastHeard >= options.heartbeatMs) {
      await tell(state);
    }
  }
  if (state !== 'succeeded' || !reader) return latest;
  const ended = await findOperation(db.kysely, operation.id);
  return ended ? operationAnswer(db.kysely, ended, reader) : latest;
}