// Streamable HTTP at /mcp on the Fastify server. Stateless: each POST gets a fresh low-level
// Server (cheap: the tools were built once at start), so any node can answer any request and
// nothing is kept between requests. Order per request: Host/Origin (403), the Mcp-Method and
// Mcp-Name headers read (standard-headers.ts), rate limit (429), bearer through admit()
// (401/403), the token's audience if a sign-in issued it (401), body (413/415), framing
// (406/400), the headers checked against the body (400), session binding (404), a step-up challenge for a tool call an
// assistant's sign-in lacks the permission for (403, step-up.ts), the protocol era
// (era-route.ts: a 2026-07-28 request carries its version in its own `_meta`), then the
// server: a 2025-era request through our own transport (JSON, or SSE when progress is asked),
// a 2026-07-28 request through the SDK's handler for that revision (modern-http.ts).
// See README.md in this folder for why stateless, and why two transports.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { bearerFrom } from '../core/authenticate.js';
import type { Capability } from '../core/capability.js';
import { AppError, toAppError } from '../core/errors.js';
import { admit, type CoreDeps } from '../core/invoke.js';
import type { Principal } from '../core/principal.js';
import { sendProblem } from '../channel-neutral/problem.js';
import { audienceRefusal } from '../oauth/audience.js';
import { MCP_SCOPE } from '../oauth/provider-config.js';
import { mcpResourceOf, protectedResourceMetadataUrlOf, publicBaseOf } from '../oauth/public-base.js';
import { RateLimiter } from '../channel-neutral/rate-limit.js';
import { hostPolicyOf, hostRefusal, type HostPolicy } from './allowed-hosts.js';
import { createMcpServer } from './mcp-server.js';
import { eraRouteOf } from './era-route.js';
import { ModernHttp } from './modern-http.js';
import { stepUpFor } from './step-up.js';
import { auditActionOf, headerMismatch, rateBucketOf, routingOf } from './standard-headers.js';
import { openSessionId, sessionBelongsTo } from './session-binding.js';
import { buildToolCatalog, type ToolCatalog } from './tool-definitions.js';
import { isInitialize, rpcBodyOf, sendRpcError, wantsProgress } from './json-rpc.js';
import { JsonResponseTransport } from './json-response-transport.js';
import { echoableIdOf } from './rpc-errors.js';

export const MCP_PATH = '/mcp';

export interface McpHttpOptions {
  /** Host names (besides loopback and the address a connection arrives on) that /mcp answers to. */
  allowedHosts?: readonly string[];
  /** The REST adapter's limiter, so a token has one budget whichever channel it uses. */
  limiter?: RateLimiter;
}

interface Gate {
  app: App;
  tools: ToolCatalog;
  modern: ModernHttp;
  hosts: HostPolicy;
  limiter: RateLimiter;
  /** The principal guard() admitted, for handle() to bind the session to the token's id. */
  admitted: WeakMap<FastifyRequest, Principal>;
  /** The app with a request's own base as its public URL, per base (see depsFor()). */
  depsByBase: Map<string, CoreDeps>;
}

export function registerMcpHttp(server: FastifyInstance, app: App, catalog: readonly Capability[], options: McpHttpOptions = {}): void {
  const gate: Gate = {
    app, tools: buildToolCatalog(catalog), hosts: hostPolicyOf(options.allowedHosts),
    modern: new ModernHttp((error) => server.log.debug({ err: error }, 'MCP request refused or failed')),
    limiter: options.limiter ?? new RateLimiter(app.config.rateLimit),
    admitted: new WeakMap(),
    depsByBase: new Map(),
  };
  server.addHook('onClose', async () => gate.modern.close());
  void server.register(async (scope) => {
    // JSON only; the body stays text until the request is admitted, and bad JSON gets a JSON-RPC error.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.route({
      method: ['POST', 'GET', 'DELETE'],
      url: MCP_PATH,
      // Before the body is read: a stranger cannot make us read 64 KB.
      onRequest: (request, reply) => guard(gate, request, reply),
      handler: (request, reply) => handle(gate, request, reply),
    });
  });
}

async function guard(gate: Gate, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const refusal = hostRefusal(gate.hosts, request.headers.host, request.headers.origin, request.socket.localAddress);
  if (refusal) return sendProblem(reply, new AppError('host_not_allowed', refusal));
  const bearer = bearerFrom(request.headers.authorization);
  // The Host was checked above, so it names this server; the 401 tells a client where to sign in.
  // Built only when asked for: most requests need neither.
  const base = () => publicBaseOf(request, gate.app.publicUrl);
  // Read before the body: the limiter and the audit know what is asked (checked against the body in handle()).
  const routing = routingOf(request.headers);
  const action = auditActionOf(routing);
  try {
    // On the Node response, which every answer is written with (Fastify's or, once handle() has
    // hijacked the reply, ours), so they need no copying from the reply later.
    gate.limiter.admitRequest(bearer, request.ip, { header: (name, value) => reply.raw.setHeader(name, value) }, rateBucketOf(routing));
    const principal = await admit(gate.app, { bearer, channel: 'mcp' }, action);
    const audienceCheck = audienceRefusal(gate.app.db.kysely, principal, () => mcpResourceOf(base()));
    const wrongAudience = audienceCheck && await audienceCheck;
    if (wrongAudience) {
      gate.app.audit.record({
        team_id: principal.teamId, actor_type: 'token', actor_id: principal.tokenId, channel: 'mcp', action,
        target_type: null, target_id: null, outcome: 'denied', code: wrongAudience.code, detail: wrongAudience.internalReason ?? null,
      });
      throw wrongAudience;
    }
    gate.admitted.set(request, principal);
    return undefined;
  } catch (thrown) {
    // The scope a first sign-in asks for: the consent page starts from read-only access.
    return sendProblem(reply, toAppError(thrown), { hadBearer: bearer !== undefined, resourceMetadata: protectedResourceMetadataUrlOf(base()), scope: MCP_SCOPE });
  }
}

const MAX_REMEMBERED_BASES = 64;

/**
 * Download links must be absolute for an assistant: without a configured public URL, the app's
 * dependencies with the request's own base, which guard() checked is a name of ours (so a few
 * at most: one per name and port this server is reached by). Kept per base rather than copying
 * the app's members on every request.
 */
function depsFor(gate: Gate, request: FastifyRequest): CoreDeps {
  if (gate.app.publicUrl) return gate.app;
  const publicUrl = `${request.protocol}://${request.headers.host}`;
  let deps = gate.depsByBase.get(publicUrl);
  if (deps === undefined) {
    if (gate.depsByBase.size >= MAX_REMEMBERED_BASES) gate.depsByBase.clear();
    deps = { ...gate.app, publicUrl };
    gate.depsByBase.set(publicUrl, deps);
  }
  return deps;
}

async function handle(gate: Gate, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.method !== 'POST') {
    // Stateless: no server-initiated stream to GET and no session to DELETE (both allowed by the spec).
    reply.header('Allow', 'POST');
    return sendRpcError(reply, { status: 405, code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC messages with POST.' });
  }
  const body = rpcBodyOf(request);
  if ('status' in body) return sendRpcError(reply, body);
  const id = echoableIdOf(body.parsed);
  const mismatch = headerMismatch(routingOf(request.headers), body.messages);
  if (mismatch) return sendRpcError(reply, { ...mismatch, id });
  const bearer = bearerFrom(request.headers.authorization) as string; // guard() admitted it
  const principal = gate.admitted.get(request) as Principal;
  const { tokenId } = principal;
  const sessionId = request.headers['mcp-session-id'];
  if (typeof sessionId === 'string' && !isInitialize(body.messages) && !sessionBelongsTo(sessionId, tokenId)) {
    await sendProblem(reply, new AppError('not_found',
      'No such MCP session for this token. Sessions belong to the token that opened them; initialize a new one.'));
    return;
  }
  const stepUp = stepUpFor(gate.tools, principal, body.messages);
  if (stepUp) {
    gate.app.audit.record({
      team_id: principal.teamId, actor_type: 'token', actor_id: tokenId, channel: 'mcp', action: stepUp.tool,
      target_type: null, target_id: null, outcome: 'denied', code: stepUp.refusal.code, detail: stepUp.refusal.detail,
    });
    const resourceMetadata = protectedResourceMetadataUrlOf(publicBaseOf(request, gate.app.publicUrl));
    await sendProblem(reply, stepUp.refusal, { hadBearer: true, resourceMetadata, scope: stepUp.scope });
    return;
  }
  const route = eraRouteOf(request.headers, body);
  if (route.kind === 'reject') return sendRpcError(reply, { status: route.httpStatus, code: route.code, message: route.message, data: route.data, id });
  reply.hijack();
  // Hijacked: only what is on the Node response reaches the client now. The headers every answer
  // carries (server.ts) and the rate limit's (guard()) were set there; nothing was set on the reply.
  const res = reply.raw;
  const deps = depsFor(gate, request);
  try {
    if (route.kind === 'modern') {
      await gate.modern.serve(request.headers, body.parsed, res, () => createMcpServer(gate.tools, deps, bearer, { era: 'modern', admitted: principal }));
      return;
    }
    if (isInitialize(body.messages)) res.setHeader('Mcp-Session-Id', openSessionId(tokenId));
    const server = createMcpServer(gate.tools, deps, bearer, { era: 'legacy', admitted: principal });
    // Closed only when the client leaves before its answer (to stop the calls it was waiting
    // for): once the answer is sent nothing is pending, and closing would only build the
    // SDK's "connection closed" error for no one.
    res.on('close', () => { if (!res.writableFinished) void server.close(); });
    // Progress notifications need an SSE stream to travel on.
    const transport = new JsonResponseTransport(res, body.batch, wantsProgress(body.messages));
    await server.connect(transport);
    transport.deliver(body.messages, {});
  } catch (error) {
    request.log.error({ err: error }, 'MCP request failed');
    if (!res.headersSent) {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error.' }, id: null }));
    } else {
      res.end();
    }
  }
}
