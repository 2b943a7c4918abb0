// What a tool call that started something long answers: an action that queued an operation
// (202) or was held for approval (its operation waits), or a decision asked of the team and
// still pending. A client that can follow a task
// gets the task at once (task-handlers.ts reads it): on 2026-07-28, one that declares the tasks
// extension in the request's capabilities; on 2025-11-25, a task-augmented call (params.task).
// Any other client gets today's behaviour: the call waits for the end (await-operation.ts,
// await-decision.ts), telling a client that asked for progress each change, and returns it as
// it stands when the time limit passes.
import { CLIENT_CAPABILITIES_META_KEY, type CallToolRequest, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { answersWithOperation, type Capability } from '../core/capability.js';
import type { CoreDeps } from '../core/invoke.js';
import type { Principal } from '../core/principal.js';
import type { ProtocolEra } from './protocol-era.js';
import { taskHandleKeys, taskIdOf } from './task-handles.js';
import { createTaskResultOf, taskStateOf } from './task-view.js';
import { awaitOperation, isQueuedOperation, waitOptionsFromEnv, type WaitOptions } from './await-operation.js';
import { awaitDecision, isPendingDecision } from './await-decision.js';
import { successResult } from './tool-results.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface LongActionContext {
  era: ProtocolEra;
  deps: CoreDeps;
  request: CallToolRequest;
  ctx: ServerContext;
  /** Whether the catalog can read this kind of task back (get_operation, get_decision). */
  canRead(kind: 'operation' | 'decision'): boolean;
  /** The caller, to bind the task to (already admitted by the call). */
  principal(): Promise<Principal>;
}

/** Whether answerLongAction() has anything to say about this output (told without a promise, for every call). */
export function isLongActionOutput(capability: Capability, output: unknown): boolean {
  return isPendingDecision(output) || (answersWithOperation(capability) && isQueuedOperation(output));
}

/** The answer for a long action, or undefined when the output is not one (answered as it is). */
export async function answerLongAction(capability: Capability, output: unknown, context: LongActionContext): Promise<CallToolResult | undefined> {
  const { deps, ctx } = context;
  const kind = isPendingDecision(output) ? 'decision' : answersWithOperation(capability) && isQueuedOperation(output) ? 'operation' : undefined;
  if (kind && followsTasks(context) && context.canRead(kind)) {
    const subject = output as { id: string; state: string; created_at: string };
    const taskId = taskIdOf(subject.id, (await context.principal()).tokenId, taskHandleKeys(deps.db.dataDir));
    return createTaskResultOf(taskStateOf(taskId, subject), context.era);
  }
  if (isPendingDecision(output)) {
    return successResult(await awaitDecision(deps.db, output, waitWithProgress(ctx, (state) => `Decision ${output.id} is ${state}.`)));
  }
  if (answersWithOperation(capability) && isQueuedOperation(output)) {
    // The token that asked waits: it sees what the operation gives back to it (a created service's initial credentials, once).
    const reader = { tokenId: (await context.principal()).tokenId, channel: 'mcp' as const, answer: capability.name, secrets: deps.secrets };
    return successResult(await awaitOperation(deps.db, output, waitWithProgress(ctx, operationProgress), reader));
  }
  return undefined;
}

function followsTasks({ era, request, ctx }: LongActionContext): boolean {
  if (era === 'legacy') return (request.params as { task?: unknown }).task !== undefined;
  return declaresTasks(ctx);
}

/** Whether a 2026-07-28 request declares the tasks extension in its own capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  return declared?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The progress line of an operation; one held for approval names its decision and who can answer it. */
function operationProgress(state: string, latest: Record<string, unknown>): string {
  if (state === 'awaiting_approval') {
    return `Operation ${String(latest.id)} awaits approval in decision ${String(latest.decision_id)}: a member of the team (in the panel) ` +
      'or another token with decisions:answer must approve it; this token cannot.';
  }
  return `Operation ${String(latest.id)} is ${state}.`;
}

function waitWithProgress(ctx: ServerContext, message: (state: string, latest: Record<string, unknown>) => string): WaitOptions {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  return {
    ...waitOptionsFromEnv(),
    onChange: progressToken === undefined ? undefined : (state, step, latest) => ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken, progress: step, message: message(state, latest) },
    }),
  };
}
