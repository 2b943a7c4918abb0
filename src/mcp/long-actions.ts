// What a tool call that started something long answers: an action that queued an operation
// (202), or a decision asked of the team and still pending. Over MCP the call waits for it to
// end (await-operation.ts, await-decision.ts), telling a client that asked for progress each
// change, and returns it as it stands when the time limit passes.
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import type { Capability } from '../core/capability.js';
import type { CoreDeps } from '../core/invoke.js';
import { awaitOperation, isQueuedOperation, waitOptionsFromEnv, type WaitOptions } from './await-operation.js';
import { awaitDecision, isPendingDecision } from './await-decision.js';
import { successResult } from './tool-results.js';

/** `legacy`: 2025-11-25 and older (opened by initialize); `modern`: 2026-07-28 (no initialize). */
export type ProtocolEra = 'legacy' | 'modern';

export interface LongActionContext {
  era: ProtocolEra;
  deps: CoreDeps;
  ctx: ServerContext;
}

/** The answer for a long action, or undefined when the output is not one (answered as it is). */
export async function answerLongAction(capability: Capability, output: unknown, context: LongActionContext): Promise<CallToolResult | undefined> {
  const { deps, ctx } = context;
  if (isPendingDecision(output)) {
    return successResult(await awaitDecision(deps.db, output, waitWithProgress(ctx, (state) => `Decision ${output.id} is ${state}.`)));
  }
  if (capability.http.status === 202 && isQueuedOperation(output)) {
    return successResult(await awaitOperation(deps.db, output, waitWithProgress(ctx, (state) => `Operation ${output.id} is ${state}.`)));
  }
  return undefined;
}

function waitWithProgress(ctx: ServerContext, message: (state: string) => string): WaitOptions {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  return {
    ...waitOptionsFromEnv(),
    onChange: progressToken === undefined ? undefined : (state, step) => ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken, progress: step, message: message(state) },
    }),
  };
}
