// A Transport (the SDK's own interface) for one HTTP POST answered with plain JSON: the messages
// go to the SDK Server, the responses come back, and one JSON body goes out. Used for every POST
// that does not ask for progress, because the SDK's StreamableHTTPServerTransport converts each
// Node request and response to web-standard objects and back, which was measured at about
// 250 us of CPU per call here (README.md): as much as the whole REST request. Protocol handling
// (initialize, tools/list, tools/call, errors) stays in the SDK Server either way.
import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type MessageExtraInfo, type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly awaited = new Set<RequestId>();
  private readonly responses: JSONRPCMessage[] = [];

  constructor(private readonly res: ServerResponse, private readonly batch: boolean) {}

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Hands the messages to the server; a POST of notifications only is answered 202 at once. */
  deliver(messages: readonly JSONRPCMessage[], extra: MessageExtraInfo): void {
    for (const message of messages) if (isJSONRPCRequest(message)) this.awaited.add(message.id);
    if (this.awaited.size === 0) this.res.writeHead(202).end();
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Notifications and server-to-client requests need a stream; a JSON answer has no room for
    // them (the SDK transport drops them too in its JSON mode). Callers wanting progress get SSE.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    if (message.id === undefined || !this.awaited.delete(message.id)) return;
    this.responses.push(message);
    if (this.awaited.size > 0 || this.res.writableEnded) return;
    const body = JSON.stringify(this.batch ? this.responses : this.responses[0]);
    this.res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  }
}
