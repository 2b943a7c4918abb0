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
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import {
  createMcpHandler, Server, type CallToolResult, type JSONRPCMessage, type RequestId, type Transport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { DATABASE_FILE } from '../../src/db/connect.js';
import { serveUntilStopped } from '../support/child-server.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: sdk-floor.js <dataDir>');
const db = new SQLite(join(dataDir, DATABASE_FILE));
db.pragma('journal_mode = WAL');

const findToken = db.prepare(`
  SELECT t.id, t.team_id, t.expires_on, t.accepted_by, t.restrict_services, t.revoked_at, team.plan
  FROM api_tokens t JOIN teams team ON team.id = t.team_id WHERE t.token_hash = ?`);
const COLUMNS = 's.id, s.name, s.server_id, s.parent_id, s.state, s.revision, s.port, s.published_host, s.created_at, s.updated_at';
const listListed = db.prepare(`
  SELECT ${COLUMNS} FROM api_token_services l CROSS JOIN erp_services s
  WHERE l.token_id = ? AND s.id = l.service_id AND s.team_id = ? AND s.deleted_at IS NULL AND s.parent_id IS NULL
  ORDER BY l.service_id LIMIT ?`).raw(true);
const listTeam = db.prepare(`
  SELECT ${COLUMNS} FROM erp_services s
  WHERE s.team_id = ? AND s.deleted_at IS NULL AND s.parent_id IS NULL
  ORDER BY s.id LIMIT ?`).raw(true);

interface Token { id: string; team_id: string; expires_on: string | null; accepted_by: string; restrict_services: number; revoked_at: string | null; plan: string }
const PLANS_WITH_API = new Set(['starter', 'business', 'enterprise']);
type Row = [string, string, string, string | null, string, number, number | null, string | null, string, string];

/** The token's row, when it may use MCP now (the expiry read as a UTC day: the bench token expires next year). */
function tokenOf(authorization: string | undefined): Token | undefined {
  if (!authorization?.startsWith('Bearer ')) return undefined;
  const token = findToken.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) as Token | undefined;
  if (!token || token.revoked_at !== null || token.accepted_by === 'api' || !PLANS_WITH_API.has(token.plan)) return undefined;
  if (token.expires_on !== null && token.expires_on < new Date().toISOString().slice(0, 10)) return undefined;
  return token;
}

function urlOf(state: string, port: number | null, publishedHost: string | null): string | null {
  if (port === null || state !== 'running') return null;
  const host = publishedHost ?? '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}

function listServices(token: Token, limit: number) {
  const rows = (token.restrict_services === 1 ? listListed.all(token.id, token.team_id, limit + 1) : listTeam.all(token.team_id, limit + 1)) as Row[];
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  return {
    data: page.map(([id, name, serverId, parentId, state, revision, port, publishedHost, createdAt, updatedAt]) => ({
      id, name, server_id: serverId, parent_id: parentId, is_copy: parentId !== null,
      state, revision, url: urlOf(state, port, publishedHost), created_at: createdAt, updated_at: updatedAt,
    })),
    next_cursor: rows.length > limit ? Buffer.from(page[page.length - 1]![0]).toString('base64url') : null,
  };
}

const validator = new AjvJsonSchemaValidator();

function serverFor(token: Token): Server {
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
