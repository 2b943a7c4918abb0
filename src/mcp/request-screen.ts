// Checks the params of each request the MCP server answers before the SDK sees it. The SDK
// parses params with its own schemas and, when they do not fit, answers -32602 with zod's raw
// issue list as the message. Here a malformed request gets -32602 Invalid params with a
// sentence naming each wrong field, and never reaches a handler. On 2026-07-28 initialize does
// not exist: the SDK answers it as a removed method (404, -32601), so it is not screened there.
import type { ProtocolEra } from './protocol-era.js';
import { isPlainObject } from './rpc-errors.js';
import {
  CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, isJSONRPCRequest, PROTOCOL_VERSION_META_KEY, ProtocolErrorCode,
  type JSONRPCErrorResponse, type JSONRPCRequest, type Transport,
} from '@modelcontextprotocol/server';
// The spec's schemas by name, not through the SDK's registry of every spec type (`specTypeSchemas`):
// the same objects, and `teaminfra mcp`'s bundle then builds only the schemas it uses
// (scripts/pure-schema-builders.mjs).
import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/core';

interface Screen {
  '~standard': { validate(value: unknown): { issues?: readonly Issue[] } | Promise<unknown> };
}

/** The methods our server answers, with the SDK's own schema for their requests (both eras share them). */
const SCHEMAS: Record<string, Screen> = {
  initialize: InitializeRequestSchema as Screen,
  ping: PingRequestSchema as Screen,
  'tools/list': ListToolsRequestSchema as Screen,
  'tools/call': CallToolRequestSchema as Screen,
};

interface Issue {
  code: string;
  path: readonly PropertyKey[];
  expected?: string;
}

/** Puts the check between the transport and the server; call after `server.connect(transport)`. */
export function screenRequests(transport: Transport, era: ProtocolEra): void {
  const deliver = transport.onmessage;
  // Named before it is stored: V8 allocates a function written straight into a property
  // (`transport.onmessage = (...) => ...`) in the old generation, and an old function keeps
  // what it closes over (here the transport, and through it the request and its answer) alive
  // through every young collection until the next full one. Per request, that is each answer
  // copied twice and promoted (src/mcp/README.md, "Garbage per call").
  const screened: Transport['onmessage'] = (message, extra) => {
    const refusal = isJSONRPCRequest(message) ? invalidParamsOf(message, era) : undefined;
    if (refusal) {
      transport.send(refusal).catch((error: unknown) => transport.onerror?.(error as Error));
      return;
    }
    deliver?.(message, extra);
  };
  transport.onmessage = screened;
}

/** The JSON-RPC error for a request whose params do not fit its method, or undefined when they do. */
export function invalidParamsOf(request: JSONRPCRequest, era: ProtocolEra): JSONRPCErrorResponse | undefined {
  if (era === 'modern' && request.method === 'initialize') return undefined;
  if (plainlyFits(request)) return undefined;
  const schema = SCHEMAS[request.method];
  // zod's standard validate is synchronous; a promise would mean a schema we did not expect, so it passes.
  const checked = schema?.['~standard'].validate(request) as { issues?: readonly Issue[] } | undefined;
  if (!checked?.issues || checked.issues.length === 0) return undefined;
  const problems = checked.issues.map((issue) => describe(issue, request));
  return {
    jsonrpc: '2.0',
    id: request.id,
    error: { code: ProtocolErrorCode.InvalidParams, message: `Invalid ${request.method} request: ${problems.join(' ')}` },
  };
}

/**
 * The common requests, told apart without running the SDK's schema (which the SDK runs on the
 * request again right after, about 10 us a call here): a tools/call with a name, arguments as an
 * object, and at most the per-request envelope in `_meta` (the SDK's classifier checked that on a
 * 2026-07-28 request, and it is absent on a 2025-era one); a tools/list with no params or only a
 * cursor; an initialize with a version, capabilities and the client's name and version (the first
 * line of every stdio start, where the schema's first run is felt). Anything else goes through
 * the schema, for the sentence.
 */
function plainlyFits(request: JSONRPCRequest): boolean {
  const params = request.params as Record<string, unknown> | undefined;
  if (request.method === 'tools/list' && params === undefined) return true;
  if (!isPlainObject(params)) return false;
  if (request.method === 'initialize') return plainInitialize(params);
  if (request.method === 'tools/call' && typeof params.name !== 'string') return false;
  if (request.method !== 'tools/call' && request.method !== 'tools/list') return false;
  for (const key in params) {
    if (key === 'name' && request.method === 'tools/call') continue;
    if (key === 'arguments' && request.method === 'tools/call' && (params.arguments === undefined || isPlainObject(params.arguments))) continue;
    if (key === 'cursor' && request.method === 'tools/list' && typeof params.cursor === 'string') continue;
    if (key === '_meta' && isPlainObject(params._meta) && Object.keys(params._meta).every((name) => ENVELOPE.has(name))) continue;
    return false;
  }
  return true;
}

function plainInitialize(params: Record<string, unknown>): boolean {
  const { protocolVersion, capabilities, clientInfo } = params;
  // Every capability a client declares is an object; what is inside each, the SDK checks.
  return Object.keys(params).length === 3 && typeof protocolVersion === 'string' && isPlainObject(capabilities) &&
    Object.values(capabilities).every(isPlainObject) && isPlainObject(clientInfo) &&
    typeof clientInfo.name === 'string' && typeof clientInfo.version === 'string';
}

const ENVELOPE = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);

function describe(issue: Issue, request: JSONRPCRequest): string {
  const field = issue.path.map(String).join('.') || 'the request';
  if (issue.code !== 'invalid_type' || !issue.expected) return `${field} is not valid.`;
  const expected = EXPECTED[issue.expected] ?? `a ${issue.expected}`;
  return valueAt(request, issue.path) === undefined ? `${field} is missing; it must be ${expected}.` : `${field} must be ${expected}.`;
}

const EXPECTED: Record<string, string> = { object: 'an object', record: 'an object', array: 'an array', string: 'a string', number: 'a number', boolean: 'true or false' };

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
