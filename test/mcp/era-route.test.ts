import { describe, expect, it } from 'vitest';
import { classifyInboundRequest, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { eraRouteOf } from '../../src/mcp/era-route.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services', arguments: {} } };

const cases: Array<[string, unknown, Record<string, string>]> = [
  ['a 2025-era call', call, { 'mcp-protocol-version': '2025-06-18' }],
  ['a call without a version header', call, {}],
  ['initialize', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, {}],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-11-25' }],
  ['a posted response', { jsonrpc: '2.0', id: 3, result: {} }, {}],
  ['a 2026-07-28 call', { ...call, params: { ...call.params, _meta: MODERN_META } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }],
  ['a modern header without the envelope', call, { 'mcp-protocol-version': '2026-07-28' }],
  ['an envelope claiming a 2025 version', { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } }, {}],
  ['a malformed envelope', { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } } }, {}],
  ['a batch', [call, { ...call, id: 2 }], {}],
  ['a batch with a modern element', [call, { ...call, id: 2, params: { ...call.params, _meta: MODERN_META } }], {}],
];

describe('eraRouteOf', () => {
  it.each(cases)('routes %s as the SDK classifier does', (_label, parsed, headers) => {
    const batch = Array.isArray(parsed);
    const messages = (batch ? parsed : [parsed]) as JSONRPCMessage[];
    const ours = eraRouteOf(headers, { messages, batch, parsed });
    const sdk = classifyInboundRequest({
      httpMethod: 'POST', body: parsed, protocolVersionHeader: headers['mcp-protocol-version'],
      mcpMethodHeader: headers['mcp-method'], mcpNameHeader: headers['mcp-name'],
    });
    expect(ours.kind).toBe(sdk.kind);
    if (ours.kind === 'reject' && sdk.kind === 'reject') expect(ours.message).toBe(sdk.message);
  });
});
