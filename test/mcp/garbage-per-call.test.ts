// What an MCP call leaves for the garbage collector (src/mcp/README.md, "Garbage per call"):
// V8 allocates a function written straight into a property in the old generation, and an old
// object keeps what it points to alive through every young collection. These run on the built
// modules in a child process, which needs V8's flags to ask where an object lives and to collect.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inV8Child } from '../support/v8-child.js';

const MCP_DIST = fileURLToPath(new URL('../../dist/src/mcp/', import.meta.url));

const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_erp_services', arguments: {} } };

describe('garbage left by an MCP call', () => {
  it('the request screen keeps its wrapper in the young generation, so it dies with the request', () => {
    const seen = inV8Child(`
      import { screenRequests } from '${MCP_DIST}request-screen.js';
      const transport = { onmessage: () => {}, send: async () => {}, start: async () => {}, close: async () => {} };
      screenRequests(transport, 'legacy');
      console.log(JSON.stringify({ young: %InYoungGeneration(transport.onmessage) }));
    `);
    expect(seen.young).toBe(true);
  });

  it('the JSON transport lets go of the answer once it is written', () => {
    const seen = inV8Child(`
      import { JsonResponseTransport } from '${MCP_DIST}json-response-transport.js';
      const res = {
        writableEnded: false, headersSent: false, written: '',
        writeHead() { this.headersSent = true; return this; },
        end(body) { this.written = body ?? ''; this.writableEnded = true; return this; },
      };
      const transport = new JsonResponseTransport(res, false);
      transport.onmessage = () => {};
      transport.deliver([${JSON.stringify(call)}], {});
      let result = { structuredContent: { data: [{ id: 'svc_1' }] }, content: [] };
      const answer = new WeakRef(result);
      await transport.send({ jsonrpc: '2.0', id: 1, result });
      result = undefined;
      await new Promise(setImmediate);
      gc();
      globalThis.stillReachable = transport;
      console.log(JSON.stringify({ written: res.written.includes('svc_1'), released: answer.deref() === undefined }));
    `);
    expect(seen).toEqual({ written: true, released: true });
  });
});
