import { describe, expect, it } from 'vitest';
import { classifyInboundRequest, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { eraRouteOf } from '../../src/mcp/era-route.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT = 'io.modelcontextprotocol/clientInfo';
const CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services', arguments: {} } };

/** A 2026-07-28 call, its envelope changed by `meta` (an undefined value takes the member out). */
function modern(meta: Record<string, unknown> = {}) {
  const envelope: Record<string, unknown> = { ...MODERN_META, ...meta };
  for (const key of Object.keys(envelope)) if (envelope[key] === undefined) delete envelope[key];
  return { ...call, params: { ...call.params, _meta: envelope } };
}

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
  // The 2026-07-28 requests this file answers without the classifier, and their near misses.
  ['a 2026-07-28 call without Mcp-Method', modern(), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose Mcp-Method names another method', modern(), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }],
  ['a 2026-07-28 call whose Mcp-Method has white space around it', modern(), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call ' }],
  ['a 2026-07-28 tools/list', { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: { _meta: MODERN_META } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }],
  ['a 2026-07-28 call declaring capabilities', modern({ [CAPABILITIES]: { sampling: {}, elicitation: {}, roots: {}, experimental: {}, extensions: {} } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call declaring a capability with members', modern({ [CAPABILITIES]: { roots: { listChanged: true } } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call declaring a malformed capability', modern({ [CAPABILITIES]: { roots: { listChanged: 'yes' } } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call declaring an unknown capability', modern({ [CAPABILITIES]: { telepathy: {} } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call declaring capabilities as a list', modern({ [CAPABILITIES]: [] }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call without capabilities', modern({ [CAPABILITIES]: undefined }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call without client info', modern({ [CLIENT]: undefined }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose client has no name', modern({ [CLIENT]: { version: '1' } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose client has a title and website', modern({ [CLIENT]: { name: 'c', version: '1', title: 'C', websiteUrl: 'https://c.example' } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose client has a numeric title', modern({ [CLIENT]: { name: 'c', version: '1', title: 7 } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose client has malformed icons', modern({ [CLIENT]: { name: 'c', version: '1', icons: 'x' } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with a log level', modern({ 'io.modelcontextprotocol/logLevel': 'debug' }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with an unknown log level', modern({ 'io.modelcontextprotocol/logLevel': 'loud' }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with a progress token', modern({ progressToken: 'p1' }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with a fractional progress token', modern({ progressToken: 1.5 }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with a related task', modern({ 'io.modelcontextprotocol/related-task': { taskId: 't' } }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose id is past the safe integers', { ...modern(), id: 2 ** 60 }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call whose id is fractional', { ...modern(), id: 1.5 }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with a member JSON-RPC does not have', { ...modern(), extra: true }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 call with params as a list', { ...call, params: [] }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 header with an envelope claiming 2025-11-25', modern({ [VERSION]: '2025-11-25' }), { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 envelope with a 2025 header', modern(), { 'mcp-protocol-version': '2025-11-25' }],
  ['a 2026-07-28 initialize', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: MODERN_META } }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 notification', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: MODERN_META } }, { 'mcp-protocol-version': '2026-07-28' }],
  ['a 2026-07-28 response', { jsonrpc: '2.0', id: 1, result: {} }, { 'mcp-protocol-version': '2026-07-28' }],
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
    if (ours.kind === 'modern' && sdk.kind === 'modern') {
      expect(ours.classification).toEqual(sdk.classification);
      expect(ours.message).toBe(sdk.message);
    }
  });
});
