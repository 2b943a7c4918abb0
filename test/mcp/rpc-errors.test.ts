import { describe, expect, it } from 'vitest';
import { specTypeSchemas } from '@modelcontextprotocol/server';
import { isJsonRpcMessage, isPlainJsonRpcRequest } from '../../src/mcp/rpc-errors.js';

const REQUEST = specTypeSchemas.JSONRPCRequest as { '~standard': { validate(value: unknown): { issues?: unknown } } };
const MESSAGE = specTypeSchemas.JSONRPCMessage as typeof REQUEST;
const accepts = (schema: typeof REQUEST, value: unknown) => !schema['~standard'].validate(value).issues;

const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services', arguments: { limit: 5 } } };
const values: Array<[string, unknown]> = [
  ['a tools/call', call],
  ['a request with a string id', { ...call, id: 'a' }],
  ['a request without params', { jsonrpc: '2.0', id: 1, method: 'ping' }],
  ['a request with a progress token', { ...call, params: { ...call.params, _meta: { progressToken: 7 } } }],
  ['a request with a string progress token', { ...call, params: { ...call.params, _meta: { progressToken: 'p' } } }],
  ['a request with a fractional progress token', { ...call, params: { ...call.params, _meta: { progressToken: 0.5 } } }],
  ['a request with a related task', { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } } }],
  ['a request with a malformed related task', { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/related-task': 'x' } } }],
  ['a request whose _meta is a string', { ...call, params: { _meta: 'x' } }],
  ['a request whose params are null', { ...call, params: null }],
  ['a request whose params are a list', { ...call, params: [1] }],
  ['a request with an id past the safe integers', { ...call, id: 2 ** 53 }],
  ['a request with a fractional id', { ...call, id: 0.5 }],
  ['a request with a null id', { ...call, id: null }],
  ['a request with version 1.0', { ...call, jsonrpc: '1.0' }],
  ['a request with a numeric method', { ...call, method: 3 }],
  ['a request with an extra member', { ...call, extra: 1 }],
  ['a request with __proto__ as a member', JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{}}')],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
  ['a response', { jsonrpc: '2.0', id: 1, result: {} }],
  ['an error', { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }],
  ['a list', [call]],
  ['a string', 'tools/call'],
  ['null', null],
];

describe('isPlainJsonRpcRequest', () => {
  it.each(values)('says yes to %s only when the SDK schema accepts it as a request', (_label, value) => {
    if (isPlainJsonRpcRequest(value)) expect(accepts(REQUEST, value)).toBe(true);
  });

  it('tells the common requests apart without the schema', () => {
    for (const index of [0, 1, 2, 3, 4]) expect(isPlainJsonRpcRequest(values[index]![1])).toBe(true);
  });
});

describe('isJsonRpcMessage', () => {
  it.each(values)('answers for %s what the SDK schema answers', (_label, value) => {
    expect(isJsonRpcMessage(value)).toBe(accepts(MESSAGE, value));
  });
});

// request-screen.ts and rpc-errors.ts take these schemas by name from @modelcontextprotocol/core
// (so that the stdio bundle builds only those): they must be the very objects the server checks
// with, which holds while package.json pins core at the version the server pins.
describe('the spec schemas taken by name', () => {
  it('are the server SDK’s own', async () => {
    const core = await import('@modelcontextprotocol/core');
    expect(core.JSONRPCMessageSchema).toBe(specTypeSchemas.JSONRPCMessage);
    expect(core.CallToolRequestSchema).toBe(specTypeSchemas.CallToolRequest);
    expect(core.InitializeRequestSchema).toBe(specTypeSchemas.InitializeRequest);
    expect(core.ListToolsRequestSchema).toBe(specTypeSchemas.ListToolsRequest);
    expect(core.PingRequestSchema).toBe(specTypeSchemas.PingRequest);
  });
});
