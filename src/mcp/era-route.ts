// Which protocol era answers one POST to /mcp. The SDK's classifier (classifyInboundRequest) is
// the authority, but it checks the message's shape again with its schemas (about 8 us a call
// here) and the 2026-07-28 handler runs it once more itself. A 2025-era client's single message
// carries no per-request envelope claim and no modern MCP-Protocol-Version header, and for such a
// message the classifier can only answer "legacy" (its own rules: no claim, no modern header);
// rpcBodyOf() has already checked that it is JSON-RPC. So that case, every 2025-era call, is
// answered here, and anything else (a claim, a modern header, a batch) goes to the classifier.
import type { IncomingHttpHeaders } from 'node:http';
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import { MODERN_PROTOCOL_VERSION, type RpcBody } from './json-rpc.js';

const PLAIN_LEGACY: InboundClassificationOutcome = Object.freeze({ kind: 'legacy', reason: 'no-claim' });

export function eraRouteOf(headers: IncomingHttpHeaders, body: RpcBody): InboundClassificationOutcome {
  const version = headerOf(headers, 'mcp-protocol-version');
  if (!body.batch && (version === undefined || version.trim() < MODERN_PROTOCOL_VERSION) && !claimsAnEra(body.parsed)) return PLAIN_LEGACY;
  return classifyInboundRequest({
    httpMethod: 'POST', body: body.parsed, protocolVersionHeader: version,
    mcpMethodHeader: headerOf(headers, 'mcp-method'), mcpNameHeader: headerOf(headers, 'mcp-name'),
  });
}

/** Whether the message's params._meta holds the protocol-version claim (whatever its value). */
function claimsAnEra(message: unknown): boolean {
  const params = (message as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as { _meta?: unknown })._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
