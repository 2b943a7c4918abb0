// A forwarder that adds `Authorization: Bearer <token>` to every request it passes on, for a
// client that cannot send one: the MCP conformance CLI has no option for a header, and /mcp
// answers nothing without a token. Everything else (method, path, Host, Origin, body, answer)
// passes unchanged, so the server sees what the client sent.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BearerForwarder { url: string; close(): Promise<void> }

export async function forwardWithBearer(target: string, token: string): Promise<BearerForwarder> {
  const { hostname, port } = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const upstream = request({
      hostname, port, path: incoming.url, method: incoming.method,
      headers: { ...incoming.headers, authorization: `Bearer ${token}` },
    }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstream.on('error', (error) => { outgoing.writeHead(502); outgoing.end(String(error)); });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
