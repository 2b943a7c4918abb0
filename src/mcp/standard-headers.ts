// The Mcp-Method and Mcp-Name request headers (MCP 2026-07-28, SEP-2243): what a request says it
// is before its body is read. /mcp reads them in its first step, so that the rate limiter and
// the audit know the method (and the tool or task) of a request that is refused before its
// body is ever read; and checks them against the body once it is, because both rely on them:
// a request whose headers say something its body does not is refused (400, -32020).
// 2025-era clients do not send them; then nothing is read and nothing is checked.
import type { IncomingHttpHeaders } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { RpcRefusal } from './json-rpc.js';

/** The JSON-RPC error code the SDK and the specification use for a header that disagrees with the body. */
export const HEADER_MISMATCH = -32020;
const MAX_LENGTH = 200;

export interface Routing {
  /** Mcp-Method: the JSON-RPC method, e.g. tools/call. */
  method?: string;
  /** Mcp-Name: the tool (tools/call), prompt, resource URI, or task id (tasks/*) the request is about. */
  name?: string;
}

export function routingOf(headers: IncomingHttpHeaders): Routing {
  return { method: bounded(headers['mcp-method']), name: bounded(headers['mcp-name']) };
}

/** What the audit calls a request refused before its body is read: the tool, the method, or just "mcp". */
export function auditActionOf(routing: Routing): string {
  if (routing.method === 'tools/call' && routing.name) return routing.name;
  return routing.method ?? 'mcp';
}

/**
 * The rate-limit budget a request is counted in besides the token's own: polls of a task
 * (tasks/get, 2026-07-28 clients, which say so in Mcp-Method) have one of their own, so that
 * following a long action never uses up what the token may still call.
 */
export function rateBucketOf(routing: Routing): string | undefined {
  return routing.method === 'tasks/get' ? 'task polls' : undefined;
}

/** The refusal for headers the body contradicts, or undefined when they agree (or were not sent). */
export function headerMismatch(routing: Routing, messages: readonly JSONRPCMessage[]): RpcRefusal | undefined {
  if (routing.method === undefined && routing.name === undefined) return undefined;
  if (messages.length !== 1) return refusal('Mcp-Method and Mcp-Name describe one message; send a batch without them.');
  const message = messages[0] as { method?: unknown; params?: Record<string, unknown> };
  if (routing.method !== undefined && routing.method !== message.method) {
    return refusal(`The Mcp-Method header says ${JSON.stringify(routing.method)} but the body's method is ${JSON.stringify(message.method ?? null)}; they must agree.`);
  }
  if (routing.name !== undefined && routing.name !== nameIn(message)) {
    return refusal(`The Mcp-Name header says ${JSON.stringify(routing.name)} but the body names ${JSON.stringify(nameIn(message) ?? null)}; they must agree.`);
  }
  return undefined;
}

/** What Mcp-Name mirrors for each method: params.name, params.uri, or params.taskId. */
function nameIn(message: { method?: unknown; params?: Record<string, unknown> }): unknown {
  const params = message.params ?? {};
  if (typeof message.method === 'string' && message.method.startsWith('tasks/')) return params.taskId;
  if (message.method === 'resources/read' || message.method === 'resources/subscribe') return params.uri;
  return params.name;
}

function refusal(message: string): RpcRefusal {
  return { status: 400, code: HEADER_MISMATCH, message: `Bad Request: ${message}` };
}

function bounded(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_LENGTH) : undefined;
}
