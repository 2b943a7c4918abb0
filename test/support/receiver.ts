// A real HTTP server on loopback that receives webhooks and answers as each test scripts it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Answers to give, in order; after the last one, 200. */
  script: { status: number; headers?: Record<string, string>; body?: string }[];
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const script: Receiver['script'] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      const answer = script.shift() ?? { status: 200, body: 'ok' };
      response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`, port, received, script,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} deliveries, got ${received.length}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
