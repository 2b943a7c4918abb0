// What both transports (HTTP's json-rpc.ts, stdio-framing.ts) answer a message refused before
// any server sees it, so that a client gets the same error on either: the request's own id
// whenever it can be read (a client matches answers to requests by id, and MCP 2026-07-28 asks
// for it on every error), -32600 for JSON that is not a JSON-RPC message (-32700 is only for
// text that is not JSON), and -32022 with the versions to choose from for a version we do not
// serve, so that a client can negotiate.
import { ProtocolErrorCode, specTypeSchemas, SUPPORTED_PROTOCOL_VERSIONS, type RequestId } from '@modelcontextprotocol/server';

/** The protocol version without initialize or sessions; the SDK's list holds the older ones. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every version /mcp and `teaminfra mcp` answer, newest first. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

const MESSAGE = specTypeSchemas.JSONRPCMessage as { '~standard': { validate(value: unknown): { issues?: unknown } } };

export interface RpcErrorBody { code: number; message: string; data?: unknown }

/** The id of a single request, when it has one a response may carry (a string or a number); null otherwise. */
export function echoableIdOf(parsed: unknown): RequestId | null {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { id } = parsed as { id?: unknown };
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

export function isJsonRpcMessage(value: unknown): boolean {
  return !MESSAGE['~standard'].validate(value).issues;
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
