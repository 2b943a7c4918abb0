// The 2026-07-28 leg of /mcp: a request that carries its protocol version and capabilities in
// its own `_meta` (no initialize, no session) is answered by the SDK's createMcpHandler, which
// owns that revision's rules (server/discover, the envelope, the standard headers, results that
// stream when a handler sends progress). We hand it a request already admitted and parsed, and
// a factory that returns our one server (mcp-server.ts) for that request; nothing else.
// The handler is web-standard (Request in, Response out); only the headers it reads are copied
// into the Request, and its Response is written back to Node's.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMcpHandler, type McpHttpHandler, type Server } from '@modelcontextprotocol/server';

/** The headers the SDK's modern path reads: the media type, and the protocol's own headers (and Mcp-Param-*). */
const FORWARDED = new Set(['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name']);
const PARAM_HEADER = 'mcp-param-';

export class ModernHttp {
  private readonly builders = new WeakMap<Request, () => Server>();
  private readonly handler: McpHttpHandler;

  constructor(onerror: (error: Error) => void) {
    this.handler = createMcpHandler(({ requestInfo }) => {
      const build = requestInfo ? this.builders.get(requestInfo) : undefined;
      if (!build) throw new Error('An MCP request reached the modern leg without its server.');
      return build();
    }, { legacy: 'reject', onerror });
  }

  /** Answers one admitted POST whose body (already parsed) the classifier routed to the modern path. */
  async serve(headers: IncomingHttpHeaders, parsedBody: unknown, res: ServerResponse, build: () => Server): Promise<void> {
    const forwarded = new Headers();
    for (const name in headers) {
      const value = headers[name];
      if (typeof value === 'string' && (FORWARDED.has(name) || (name.startsWith(PARAM_HEADER) && name.length > PARAM_HEADER.length))) forwarded.set(name, value);
    }
    // The client leaving is the 2026-07-28 way of cancelling a request: close the exchange's
    // server, which is what the SDK does when the Request's signal aborts (its transport closes,
    // the handlers' signals abort, the answer becomes a 499). Not through a signal on the
    // Request: undici ties a given signal to the Request's own with a WeakRef and a
    // FinalizationRegistry, about 50 us a request here.
    let server: Server | undefined;
    res.once('close', () => { if (!res.writableFinished) void server?.close(); });
    const request = new Request('http://mcp.invalid/mcp', { method: 'POST', headers: forwarded });
    this.builders.set(request, () => (server = build()));
    const response = await this.handler.fetch(request, { parsedBody });
    if (response.status === 499 || res.destroyed) return;
    res.statusCode = response.status;
    response.headers.forEach((value, name) => res.setHeader(name, value));
    if (!response.body || response.headers.get('content-type')?.startsWith('application/json')) {
      // The bytes as the SDK encoded them: text() would decode them only for res.end() to encode them again.
      res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
      return;
    }
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), res).catch(() => res.destroy());
  }

  close(): Promise<void> {
    return this.handler.close();
  }
}
