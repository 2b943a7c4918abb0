// A Transport (the SDK's own interface) for one HTTP POST of a 2025-era client: the messages go
// to the SDK Server, the responses come back, and one answer goes out: a JSON body, or, when
// the client asked for progress, an SSE stream carrying the notifications and then the
// responses. Ours rather than the SDK's streamable HTTP transport because that one converts
// each Node request and response to web-standard objects and back, which was measured at about
// 250 us of CPU per call here (docs/mcp-and-sign-in.md): as much as the whole REST request. Protocol handling
// (initialize, tools/list, tools/call, errors) stays in the SDK Server either way.
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport } from '@modelcontextprotocol/server';

export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly awaited = new Set<RequestId>();
  private readonly responses: JSONRPCMessage[] = [];

  /** With `stream`, the answer is an SSE stream, so that notifications (progress) can go before the result. */
  constructor(private readonly res: ServerResponse, private readonly batch: boolean, private readonly stream = false) {}

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /**
   * Hands the messages to the server; a POST of notifications only is answered 202 at once.
   * The messages were checked by rpcBodyOf() and what send() gets was built by the SDK, so the
   * kind of each is read from its members, not checked again against the SDK's schemas (which
   * copies a whole result to tell a result from an error).
   */
  deliver(messages: readonly JSONRPCMessage[], extra: MessageExtraInfo): void {
    for (const message of messages) if ('method' in message && 'id' in message) this.awaited.add(message.id);
    if (this.awaited.size === 0) this.res.writeHead(202).end();
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.res.writableEnded) return;
    const isResponse = 'result' in message || 'error' in message;
    if (!isResponse) {
      // A JSON answer has no room for notifications (the SDK transport drops them too in its JSON mode).
      if (this.stream) this.writeEvent(message);
      return;
    }
    if (message.id === undefined || !this.awaited.delete(message.id)) return;
    if (this.stream) {
      this.writeEvent(message);
      if (this.awaited.size === 0) this.res.end();
      return;
    }
    this.responses.push(message);
    if (this.awaited.size > 0) return;
    const body = JSON.stringify(this.batch ? this.responses : this.responses[0]);
    // With its length, the answer goes out in one piece rather than chunked.
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  }

  private writeEvent(message: JSONRPCMessage): void {
    if (!this.res.headersSent) this.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}
