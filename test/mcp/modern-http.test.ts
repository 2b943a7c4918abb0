import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { ModernHttp } from '../../src/mcp/modern-http.js';

const HEADERS = {
  'content-type': 'application/json', accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'wait',
};
const CALL = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
} } };

/** Just what serve() touches of a Node response. */
class LeavingResponse extends EventEmitter {
  writableFinished = false;
  destroyed = false;
  written = false;
  setHeader() {}
  end() { this.written = true; }
  leave() { this.destroyed = true; this.emit('close'); }
}

describe('ModernHttp', () => {
  it('aborts the handler and writes nothing when the client leaves before its answer', async () => {
    const modern = new ModernHttp(() => {});
    let aborted = false;
    const build = () => {
      const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/call', (_request, ctx) => new Promise((resolve) => {
        ctx.mcpReq.signal.addEventListener('abort', () => { aborted = true; resolve({ content: [] }); });
      }));
      return server;
    };
    const res = new LeavingResponse();
    const served = modern.serve(HEADERS, CALL, res as unknown as ServerResponse, build);
    setTimeout(() => res.leave(), 20);
    await served;
    expect(aborted).toBe(true);
    expect(res.written).toBe(false);
    await modern.close();
  });
});
