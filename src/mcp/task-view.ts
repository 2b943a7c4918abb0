// How an operation or a decision looks as a task, in each era's vocabulary.
// States: an operation queued, running or awaiting approval, and a decision still pending, are
// `working`; an operation that ended (succeeded or failed) and a decision that ended (answered,
// expired, cancelled) are `completed`, with the tool result the call would have returned by
// waiting: the operation or decision as it ended. `failed` is for JSON-RPC errors only (the
// tasks extension), and an operation that failed is a tool call that worked and reports it.
// A task lives as long as its operation or decision, which are kept: no time to live (null).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { successResult } from './tool-results.js';
import type { ProtocolEra } from './protocol-era.js';

/** How often a client is asked to poll, in milliseconds. */
export const POLL_INTERVAL_MS = 1000;

/** The view of an operation or a decision, as get_operation and get_decision return them. */
export interface TaskSubject {
  id: string;
  state: string;
  created_at: string;
  started_at?: string | null;
  finished_at?: string | null;
  answered_at?: string | null;
}

export interface TaskState {
  taskId: string;
  status: 'working' | 'completed';
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** The tool result, once completed. */
  result?: CallToolResult;
}

const ENDED = new Set(['succeeded', 'failed', 'answered', 'expired', 'cancelled']);

export function taskStateOf(taskId: string, subject: TaskSubject): TaskState {
  const ended = ENDED.has(subject.state);
  const what = subject.id.startsWith('dec_') ? 'Decision' : 'Operation';
  return {
    taskId,
    status: ended ? 'completed' : 'working',
    statusMessage: subject.state === 'awaiting_approval'
      ? `${what} ${subject.id} waits for someone to approve it.`
      : `${what} ${subject.id} is ${subject.state}.`,
    createdAt: subject.created_at,
    lastUpdatedAt: subject.finished_at ?? subject.answered_at ?? subject.started_at ?? subject.created_at,
    ...(ended ? { result: successResult(subject) } : {}),
  };
}

/** The task fields as tasks/get answers them (2026-07-28: the result inline once completed). */
export function taskFieldsOf(state: TaskState, era: ProtocolEra): Record<string, unknown> {
  const { result, ...fields } = state;
  if (era === 'legacy') return { ...fields, ttl: null, pollInterval: POLL_INTERVAL_MS };
  return { ...fields, ttlMs: null, pollIntervalMs: POLL_INTERVAL_MS, ...(result ? { result } : {}) };
}

/**
 * What tools/call answers when it starts a task. 2026-07-28: the task itself, `resultType: "task"`.
 * 2025-11-25: `{ task }`, plus a `content` sentence: the SDK holds a tools/call result to the
 * CallToolResult shape in that era, and a client that did not follow the task still reads
 * where the result will be.
 */
export function createTaskResultOf(state: TaskState, era: ProtocolEra): CallToolResult {
  if (era === 'modern') return { resultType: 'task', ...taskFieldsOf(state, era) } as unknown as CallToolResult;
  return {
    task: taskFieldsOf(state, era),
    content: [{ type: 'text', text: `${state.statusMessage} Follow it as task ${state.taskId} (tasks/get, then tasks/result).` }],
  } as unknown as CallToolResult;
}
