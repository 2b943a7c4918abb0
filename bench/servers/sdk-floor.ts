// Baseline (d): the best MCP server a careful engineer would write for this one tool with the same
// SDK (@modelcontextprotocol/server) and the same HTTP stack (Fastify, no logger). POST /mcp:
// the bearer's SHA-256 looked up with the same token-with-team query teaminfra runs (revoked,
// expiry, channel and plan checked), the same rows as (c) reads them (prepared once, raw mode),
// and the SDK's low-level Server answering tools/call list_erp_services with the same
// structuredContent and text. A 2025-era call goes through a minimal Transport that answers the
// one response as JSON (the SDK's streamable-HTTP transport converts every Node request to a web
// Request and back); a 2026-07-28 call through the SDK's createMcpHandler, which owns that
// revision and is web-standard by design (Request in, Response out). One Server per request,
// as the SDK's stateless examples do, with one shared JSON Schema validator.
// No rate limit, no audit, no Host/Origin check, no session, no request screen, no other tool.
// Written against schema.sql and the SDK, not against our src/mcp.
// argv: <dataDir>
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import {
  createMcpHandler, Server, type CallToolResult, type JSONRPCMessage, type RequestId, type Transport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { serveUntilStopped } from '../support/child-server.js';
import { floorReads, type FloorToken } from './sdk-floor-reads.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: sdk-floor.js <dataDir>');
const db = new SQLite(join(dataDir, DATABASE_FILE));
db.pragma('journal_mode = WAL');

const { tokenOf, listServices } = floorReads(db);

const validator = new AjvJsonSchemaValidator();

function serverFor(token: FloorToken): Server {
  const server = new Server({ name: 'floor', version: '1' }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
  server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
    const limit = Math.min(200, Number((request.params.arguments as { limit?: unknown } | undefined)?.limit ?? 50) || 50);
    const output = listServices(token, limit);
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  });
  return server;
}

/** One POST, one JSON answer: what a 2025-era client gets when it sends a single request. */
class OneAnswerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private awaited: RequestId | undefined;
  constructor(private readonly reply: (body: string) => void) {}
  async start(): Promise<void> {}
  async close(): Promise<void> { this.onclose?.(); }
  deliver(message: JSONRPCMessage): void {
    if ('id' in message && 'method' in message) this.awaited = message.id;
    this.onmessage?.(message);
  }
  async send(message: JSONRPCMessage): Promise<void> {
    if (('result' in message || 'error' in message) && message.id === this.awaited) this.reply(JSON.stringify(message));
  }
}

const builders = new WeakMap<Request, () => Server>();
const modern = createMcpHandler(({ requestInfo }) => builders.get(requestInfo!)!(), { legacy: 'reject' });

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
app.post('/mcp', async (request, reply) => {
  const token = tokenOf(request.headers.authorization);
  if (!token) return reply.code(401).send({ error: 'unauthorized' });
  const message = JSON.parse(request.body as string) as JSONRPCMessage;
  if (request.headers['mcp-protocol-version'] === '2026-07-28') {
    const headers = new Headers();
    for (const name of ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name']) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    const webRequest = new Request('http://floor.invalid/mcp', { method: 'POST', headers });
    builders.set(webRequest, () => serverFor(token));
    const response = await modern.fetch(webRequest, { parsedBody: message });
    reply.hijack();
    reply.raw.statusCode = response.status;
    response.headers.forEach((value, name) => reply.raw.setHeader(name, value));
    reply.raw.end(Buffer.from(await response.arrayBuffer()));
    return reply;
  }
  reply.hijack();
  const server = serverFor(token);
  const transport = new OneAnswerTransport((body) => reply.raw.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body));
  await server.connect(transport);
  transport.deliver(message);
  return reply;
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
serveUntilStopped(typeof address === 'object' && address ? address.port : 0, async () => {
  await app.close();
  db.close();
});
