// The task methods: tasks/get (both eras), tasks/result (2025-11-25), tasks/cancel and
// tasks/update (2026-07-28, the tasks extension). A task is an operation or a decision of ours
// (task-handles.ts); reading it goes through the same gate as any call: invoke() of
// get_operation or get_decision with the caller's own token, so a revoked token, a permission
// taken away or a thing out of reach is refused exactly as those tools would refuse it. A
// handle that another token started is refused as not found, with the same sentence as a
// task that does not exist. On 2026-07-28 the task methods belong to the tasks extension: a
// request whose capabilities do not declare it is refused with -32021 naming the extension,
// before the task is looked at.
import * as z from 'zod';
import {
  MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type CallToolResult, type Server, type ServerContext,
} from '@modelcontextprotocol/server';
import { AppError, toAppError } from '../core/errors.js';
import { admit, invoke, type CoreDeps, type Credentials } from '../core/invoke.js';
import type { ToolCatalog } from './tool-definitions.js';
import { problemOf } from '../channel-neutral/problem.js';
import { protocolErrorOf } from './tool-results.js';
import { targetOfTask, taskHandleKeys } from './task-handles.js';
import { taskFieldsOf, taskStateOf, type TaskState, type TaskSubject } from './task-view.js';
import { awaitOperation, waitOptionsFromEnv } from './await-operation.js';
import { awaitDecision } from './await-decision.js';
import { declaresTasks, TASKS_EXTENSION } from './long-actions.js';
import type { ProtocolEra } from './protocol-era.js';

export { TASKS_EXTENSION };

const TaskParams = z.looseObject({ taskId: z.string().min(1).max(200) });
const AnyResult = z.looseObject({});

export interface TaskHandlerContext {
  era: ProtocolEra;
  tools: ToolCatalog;
  deps: CoreDeps;
  credentials: Credentials;
}

export function registerTaskHandlers(server: Server, context: TaskHandlerContext): void {
  const { era } = context;
  server.setRequestHandler('tasks/get', { params: TaskParams, result: AnyResult }, async ({ taskId }, ctx) => {
    if (era === 'modern') requireTasksExtension(ctx, 'tasks/get');
    return taskFieldsOf(await readTask(context, taskId, 'tasks/get'), era);
  });

  if (era === 'legacy') {
    server.setRequestHandler('tasks/result', { params: TaskParams, result: AnyResult }, async ({ taskId }) => {
      const result = (await endedTask(context, taskId)).result as CallToolResult;
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    });
    return;
  }
  // Operations cannot be stopped half-way; cancelling is cooperative (the extension allows an
  // acknowledgement only), so the handle is checked and the work goes on.
  server.setRequestHandler('tasks/cancel', { params: TaskParams, result: AnyResult }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx, 'tasks/cancel');
    await readTask(context, taskId, 'tasks/cancel');
    return {};
  });
  // We never ask a task for input (no input_required), so any response is for a key we never issued: ignored.
  server.setRequestHandler('tasks/update', { params: TaskParams, result: AnyResult }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx, 'tasks/update');
    await readTask(context, taskId, 'tasks/update');
    return {};
  });
}

function requireTasksExtension(ctx: ServerContext, method: string): void {
  if (declaresTasks(ctx)) return;
  throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${method} belongs to the ${TASKS_EXTENSION} extension: declare it in the request's clientCapabilities.`);
}

/** The task as it stands, read through invoke() with the caller's token; a JSON-RPC error otherwise. */
export async function readTask(context: TaskHandlerContext, taskId: string, method: string): Promise<TaskState> {
  const { tools, deps, credentials } = context;
  const principal = await admit(deps, credentials, method).catch((thrown: unknown) => { throw protocolErrorOf(toAppError(thrown)); });
  const targetId = targetOfTask(taskId, principal.tokenId, taskHandleKeys(deps.db.dataDir));
  const reader = targetId?.startsWith('dec_') ? tools.find('get_decision') : tools.find('get_operation');
  if (!targetId || !reader) throw noSuchTask();
  const input = targetId.startsWith('dec_') ? { decision_id: targetId } : { operation_id: targetId };
  // Only an answer that carries the task's result may take what it shows once (a created
  // service's initial credentials): without the key, get_operation leaves them in place.
  const carriesResult = method === 'tasks/result' || (method === 'tasks/get' && context.era === 'modern');
  try {
    return taskStateOf(taskId, await invoke(reader.capability, input, credentials, carriesResult ? deps : { ...deps, secrets: undefined }) as TaskSubject);
  } catch (thrown) {
    const error = toAppError(thrown);
    throw error.code === 'not_found' ? noSuchTask() : protocolErrorOf(error);
  }
}

/** tasks/result (2025-11-25) waits for the task to end, as a call without a task would have. */
async function endedTask(context: TaskHandlerContext, taskId: string): Promise<TaskState> {
  const state = await readTask(context, taskId, 'tasks/result');
  if (state.status === 'completed') return state;
  const tokenId = (await admit(context.deps, context.credentials, 'tasks/result')).tokenId;
  const targetId = targetOfTask(taskId, tokenId, taskHandleKeys(context.deps.db.dataDir)) as string;
  const subject = { id: targetId, state: 'queued' };
  if (targetId.startsWith('dec_')) await awaitDecision(context.deps.db, { ...subject, state: 'pending' }, waitOptionsFromEnv());
  else await awaitOperation(context.deps.db, subject, waitOptionsFromEnv());
  // Read again through the gate: the wait only watched the row.
  const after = await readTask(context, taskId, 'tasks/result');
  if (after.status === 'completed') return after;
  throw new ProtocolError(ProtocolErrorCode.InvalidRequest,
    `Task ${taskId} has not ended yet (${after.statusMessage}) Poll tasks/get and ask for the result once it is completed.`);
}

/** One answer for a task that does not exist, is out of reach, or was started by another token. */
function noSuchTask(): ProtocolError {
  const error = new AppError('not_found', 'No task with this id was started by this token.');
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `not_found: ${error.detail}`, problemOf(error));
}
