// The framing of one POST to /mcp, checked before any MCP server sees it: what the client
// accepts, its protocol version, and whether the body is JSON-RPC. Refusals use the JSON-RPC
// error shape the SDK's transports use (id null), so clients see the same errors either way.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { specTypeSchemas, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from '@modelcontextprotocol/server';

const MAX_BATCH = 100;

/** The protocol version without initialize or sessions; the SDK's list above holds the older ones. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every version /mcp and `teaminfra mcp` answer, newest first. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

const MESSAGE = specTypeSchemas.JSONRPCMessage as { '~standard': { validate(value: unknown): { issues?: unknown } } };

export interface RpcRefusal { status: number; code: number; message: string }
/** The messages as sent (not re-serialized by a schema, so the modern envelope stays as it came), and the parsed body. */
export interface RpcBody { messages: JSONRPCMessage[]; batch: boolean; parsed: unknown }

export function rpcBodyOf(request: FastifyRequest): RpcBody | RpcRefusal {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' };
  }
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SERVED_PROTOCOL_VERSIONS.includes(version)) {
    return { status: 400, code: -32000, message: `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SERVED_PROTOCOL_VERSIONS.join(', ')})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof request.body === 'string' ? request.body : '');
  } catch {
    return { status: 400, code: -32700, message: 'Parse error: the request body is not valid JSON.' };
  }
  const batch = Array.isArray(parsed);
  const items: unknown[] = batch ? parsed as unknown[] : [parsed];
  if (items.length === 0 || items.length > MAX_BATCH) {
    return { status: 400, code: -32600, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages.` };
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    if (MESSAGE['~standard'].validate(item).issues) return { status: 400, code: -32700, message: 'Parse error: Invalid JSON-RPC message' };
    messages.push(item as JSONRPCMessage);
  }
  if (isInitialize(messages) && messages.length > 1) {
    return { status: 400, code: -32600, message: 'Invalid Request: Only one initialization request is allowed' };
  }
  return { messages, batch, parsed };
}

export function isInitialize(messages: readonly JSONRPCMessage[]): boolean {
  return messages.some((message) => 'method' in message && message.method === 'initialize');
}

/** A request asking for progress notifications needs an SSE response to carry them. */
export function wantsProgress(messages: readonly JSONRPCMessage[]): boolean {
  return messages.some((message) => 'params' in message && message.params?._meta?.progressToken !== undefined);
}

export async function sendRpcError(reply: FastifyReply, refusal: RpcRefusal): Promise<void> {
  await reply.code(refusal.status).type('application/json')
    .send(JSON.stringify({ jsonrpc: '2.0', error: { code: refusal.code, message: refusal.message }, id: null }));
}
