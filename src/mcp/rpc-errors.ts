// What both transports (HTTP's json-rpc.ts, stdio-framing.ts) answer a message refused before
// any server sees it, so that a client gets the same error on either: the request's own id
// whenever it can be read (a client matches answers to requests by id, and MCP 2026-07-28 asks
// for it on every error), -32600 for JSON that is not a JSON-RPC message (-32700 is only for
// text that is not JSON), and -32022 with the versions to choose from for a version we do not
// serve, so that a client can negotiate.
import {
  ProtocolErrorCode, RELATED_TASK_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCRequest, type RequestId,
} from '@modelcontextprotocol/server';
// By name rather than through `specTypeSchemas`, for the reason given in request-screen.ts.
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';

/** The protocol version without initialize or sessions; the SDK's list holds the older ones. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every version /mcp and `teaminfra mcp` answer, newest first. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

const MESSAGE = JSONRPCMessageSchema as { '~standard': { validate(value: unknown): { issues?: unknown } } };

export interface RpcErrorBody { code: number; message: string; data?: unknown }

/** The id of a single request, when it has one a response may carry (a string or a number); null otherwise. */
export function echoableIdOf(parsed: unknown): RequestId | null {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { id } = parsed as { id?: unknown };
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

export function isJsonRpcMessage(value: unknown): boolean {
  return isPlainJsonRpcRequest(value) || !MESSAGE['~standard'].validate(value).issues;
}

const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * A request the SDK's JSONRPCRequest schema accepts, told without running it (its zod parse is
 * about 2 us a call here, a failed one of the other message kinds 3 us): the schema's own rules,
 * written out for the common case. Strict members; id a string or a safe integer (zod's int());
 * params absent or an object whose `_meta`, if any, is an object with at most a string or
 * safe-integer progressToken of the keys it checks. `false` only means "not told apart here":
 * the callers then ask the schema, so nothing it accepts or refuses changes.
 */
export function isPlainJsonRpcRequest(value: unknown): value is JSONRPCRequest {
  if (!isPlainObject(value)) return false;
  const { jsonrpc, id, method, params } = value;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || (typeof id !== 'string' && !Number.isSafeInteger(id))) return false;
  for (const key in value) if (!REQUEST_MEMBERS.has(key)) return false;
  if (params === undefined) return true;
  if (!isPlainObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta) || meta[RELATED_TASK_META_KEY] !== undefined) return false;
  const { progressToken } = meta;
  return progressToken === undefined || typeof progressToken === 'string' || Number.isSafeInteger(progressToken);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `what`: the request body (HTTP) or the line (stdio). */
export function notJson(what: string): RpcErrorBody {
  return { code: ProtocolErrorCode.ParseError, message: `Parse error: ${what} is not valid JSON.` };
}
export const NOT_A_MESSAGE: RpcErrorBody = {
  code: ProtocolErrorCode.InvalidRequest,
  message: 'Invalid Request: this JSON is not a JSON-RPC 2.0 request, notification or response.',
};

/**
 * A version we do not serve. `data.supported` lists what a request may name in its own `_meta`
 * (what server/discover lists); the sentence also names the older versions, which a client
 * reaches through initialize instead.
 */
export function unsupportedVersion(requested: string): RpcErrorBody {
  return {
    code: ProtocolErrorCode.UnsupportedProtocolVersion,
    message: `Unsupported protocol version: ${requested} (supported versions: ${SERVED_PROTOCOL_VERSIONS.join(', ')}; ` +
      `${MODERN_PROTOCOL_VERSION} per request, the others through initialize)`,
    data: { supported: [MODERN_PROTOCOL_VERSION], requested },
  };
}
