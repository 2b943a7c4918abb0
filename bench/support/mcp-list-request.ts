// The MCP call every MCP bench and profile sends: tools/call list_erp_services for a page of 50,
// as a 2025-era client sends it and as a 2026-07-28 client does (version, client and
// capabilities in the request's own _meta; Mcp-Method and Mcp-Name headers).
export type McpEra = 'legacy' | 'modern';

export const LIST_SERVICES_CALL = {
  jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services', arguments: { limit: 50 } },
} as const;

const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The POST to `${base}/mcp` that makes the call with `token`, in that era. */
export function mcpListRequest(base: string, token: string, era: McpEra) {
  const modern = era === 'modern';
  const call = modern ? { ...LIST_SERVICES_CALL, params: { ...LIST_SERVICES_CALL.params, _meta: MODERN_ENVELOPE } } : LIST_SERVICES_CALL;
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': modern ? '2026-07-28' : '2025-06-18',
    ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'list_erp_services' } : {}),
  };
  return { url: `${base}/mcp`, method: 'POST' as const, body: JSON.stringify(call), headers };
}
