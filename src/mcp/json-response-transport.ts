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

  /** Let go once the answer is out (release()). */
  private res: ServerResponse | undefined;

  /** With `stream`, the answer is an SSE stream, so that notifications (progress) can go before the result. */
  constructor(res: ServerResponse, private readonly batch: boolean, private readonly stream = false) {
    this.res = res;
  }

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
    if (this.awaited.size === 0) this.release()?.writeHead(202).end();
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const res = this.res;
    if (!res || res.writableEnded) return;
    const isResponse = 'result' in message || 'error' in message;
    if (!isResponse) {
      // A JSON answer has no room for notifications (the SDK transport drops them too in its JSON mode).
      if (this.stream) this.writeEvent(res, message);
      return;
    }
    if (message.id === undefined || !this.awaited.delete(message.id)) return;
    if (this.stream) {
      this.writeEvent(res, message);
      if (this.awaited.size === 0) this.release()?.end();
      return;
    }
    this.responses.push(message);
    if (this.awaited.size > 0) return;
    const body = JSON.stringify(this.batch ? this.responses : this.responses[0]);
    this.release();
    // With its length, the answer goes out in one piece rather than chunked.
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  }

  /**
   * The answer is complete: drops the response and the results, and returns the response to end.
   * The SDK keeps this transport reachable from functions it allocates in the old generation
   * (Protocol.connect() writes them straight into onclose, onerror and onmessage), so whatever
   * the transport still holds lives until the next full collection: each call's result and
   * Node response would be copied twice and promoted (src/mcp/README.md, "Garbage per call").
   */
  private release(): ServerResponse | undefined {
    const res = this.res;
    this.res = undefined;
    this.responses.length = 0;
    return res;
  }

  private writeEvent(res: ServerResponse, message: JSONRPCMessage): void {
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}
