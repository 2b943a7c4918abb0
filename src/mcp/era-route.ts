// Which protocol era answers one POST to /mcp. The SDK's classifier (classifyInboundRequest) is
// the authority, but it checks the message's shape again with its schemas (about 12 us a
// 2026-07-28 call here, most of it zod failing to read a request as a response and as an error)
// and the 2026-07-28 handler runs it once more itself. Two common cases are answered here with
// the classifier's own rules, and anything else (a batch, an initialize, a malformed or unusual
// envelope, headers that disagree) goes to the classifier:
// - a 2025-era client's single message carries no per-request envelope claim and no modern
//   MCP-Protocol-Version header, and for such a message the classifier can only answer "legacy"
//   (no claim, no modern header); rpcBodyOf() has already checked that it is JSON-RPC;
// - a 2026-07-28 client's single request whose header and envelope name 2026-07-28, whose
//   Mcp-Method (if sent) names its method, and whose envelope is plainly valid: a client name
//   and version, and capabilities each declared as {} (what the envelope's schema accepts for
//   each of them). The classifier answers "modern" for it.
import type { IncomingHttpHeaders } from 'node:http';
import {
  classifyInboundRequest, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY,
  type InboundClassificationOutcome, type JSONRPCRequest,
} from '@modelcontextprotocol/server';
import { MODERN_PROTOCOL_VERSION, type RpcBody } from './json-rpc.js';
import { isPlainJsonRpcRequest, isPlainObject } from './rpc-errors.js';

const PLAIN_LEGACY: InboundClassificationOutcome = Object.freeze({ kind: 'legacy', reason: 'no-claim' });
const MODERN_CLASSIFICATION = Object.freeze({ era: 'modern', revision: MODERN_PROTOCOL_VERSION } as const);

export function eraRouteOf(headers: IncomingHttpHeaders, body: RpcBody): InboundClassificationOutcome {
  const version = headerOf(headers, 'mcp-protocol-version');
  const method = headerOf(headers, 'mcp-method');
  if (!body.batch && (version === undefined || version.trim() < MODERN_PROTOCOL_VERSION) && !claimsAnEra(body.parsed)) return PLAIN_LEGACY;
  if (!body.batch && version === MODERN_PROTOCOL_VERSION && isPlainModernRequest(body.parsed, method)) {
    return { kind: 'modern', messageKind: 'request', message: body.parsed, classification: MODERN_CLASSIFICATION };
  }
  return classifyInboundRequest({
    httpMethod: 'POST', body: body.parsed, protocolVersionHeader: version,
    mcpMethodHeader: method, mcpNameHeader: headerOf(headers, 'mcp-name'),
  });
}

/** Whether the message's params._meta holds the protocol-version claim (whatever its value). */
function claimsAnEra(message: unknown): boolean {
  const params = (message as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * A request (not initialize) whose envelope claims 2026-07-28, sent with that version in its
 * header (checked by the caller, so neither has white space to strip) and an Mcp-Method naming
 * its method or none: the classifier's "modern" case, when the envelope is plainly valid.
 */
function isPlainModernRequest(message: unknown, methodHeader: string | undefined): message is JSONRPCRequest {
  if (!isPlainJsonRpcRequest(message) || message.method === 'initialize') return false;
  if (methodHeader !== undefined && (methodHeader !== message.method || methodHeader.trim() !== methodHeader)) return false;
  const meta = message.params?._meta;
  return meta !== undefined && meta[PROTOCOL_VERSION_META_KEY] === MODERN_PROTOCOL_VERSION && isPlainEnvelope(meta);
}

/** The capabilities whose schemas accept an empty object (sampling, elicitation, roots, and the two records). */
const CAPABILITIES_ACCEPTING_EMPTY = new Set(['experimental', 'sampling', 'elicitation', 'roots', 'extensions']);
const IMPLEMENTATION_TEXTS = ['title', 'websiteUrl', 'description'] as const;

/**
 * An envelope the 2026-07-28 envelope schema accepts, in its common form (progressToken was
 * checked with the request): capabilities present, each a known one declared as {}; the client's
 * name and version as strings with at most its title, website and description; no log level.
 */
function isPlainEnvelope(meta: Record<string, unknown>): boolean {
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  if (!isPlainObject(capabilities) || meta[LOG_LEVEL_META_KEY] !== undefined) return false;
  for (const name in capabilities) {
    const declared = capabilities[name];
    if (!CAPABILITIES_ACCEPTING_EMPTY.has(name) || !isPlainObject(declared) || Object.keys(declared).length > 0) return false;
  }
  const client = meta[CLIENT_INFO_META_KEY];
  if (client === undefined) return true;
  if (!isPlainObject(client) || typeof client.name !== 'string' || typeof client.version !== 'string' || client.icons !== undefined) return false;
  return IMPLEMENTATION_TEXTS.every((text) => client[text] === undefined || typeof client[text] === 'string');
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
