// The framing of one POST to /mcp, checked before any MCP server sees it: what the client
// accepts, its protocol version, and whether the body is JSON-RPC. Refusals use the JSON-RPC
// error shape, with the request's id when it can be read (rpc-errors.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProtocolErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/server';
import { echoableIdOf, isJsonRpcMessage, NOT_A_MESSAGE, notJson, SERVED_PROTOCOL_VERSIONS, unsupportedVersion } from './rpc-errors.js';

export { MODERN_PROTOCOL_VERSION, SERVED_PROTOCOL_VERSIONS } from './rpc-errors.js';

const MAX_BATCH = 100;

export interface RpcRefusal { status: number; code: number; message: string; data?: unknown; id?: RequestId | null }
/** The messages as sent (not re-serialized by a schema, so the modern envelope stays as it came), and the parsed body. */
export interface RpcBody { messages: JSONRPCMessage[]; batch: boolean; parsed: unknown }

const UNPARSABLE = Symbol('unparsable');

export function rpcBodyOf(request: FastifyRequest): RpcBody | RpcRefusal {
  const parsed = parseBody(request.body);
  const id = parsed === UNPARSABLE ? null : echoableIdOf(parsed);
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream', id };
  }
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SERVED_PROTOCOL_VERSIONS.includes(version)) {
    const error = unsupportedVersion(version);
    return { status: 400, ...error, message: `Bad Request: ${error.message}`, id };
  }
  if (parsed === UNPARSABLE) return { status: 400, ...notJson('the request body'), id: null };
  const batch = Array.isArray(parsed);
  const items: unknown[] = batch ? parsed as unknown[] : [parsed];
  if (items.length === 0 || items.length > MAX_BATCH) {
    return { status: 400, code: ProtocolErrorCode.InvalidRequest, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages.`, id: null };
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    if (!isJsonRpcMessage(item)) return { status: 400, ...NOT_A_MESSAGE, id };
    messages.push(item as JSONRPCMessage);
  }
  if (isInitialize(messages) && messages.length > 1) {
    return { status: 400, code: ProtocolErrorCode.InvalidRequest, message: 'Invalid Request: Only one initialization request is allowed', id: null };
  }
  return { messages, batch, parsed };
}

function parseBody(body: unknown): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : '');
  } catch {
    return UNPARSABLE;
  }
}

export function isInitialize(messages: readonly JSONRPCMessage[]): boolean {
  return messages.some((message) => 'method' in message && message.method === 'initialize');
}

/** A request asking for progress notifications needs an SSE response to carry them. */
export function wantsProgress(messages: readonly JSONRPCMessage[]): boolean {
  return messages.some((message) => 'params' in message && message.params?._meta?.progressToken !== undefined);
}

export async function sendRpcError(reply: FastifyReply, refusal: RpcRefusal): Promise<void> {
  const error = refusal.data === undefined ? { code: refusal.code, message: refusal.message } : { code: refusal.code, message: refusal.message, data: refusal.data };
  await reply.code(refusal.status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', error, id: refusal.id ?? null }));
}
