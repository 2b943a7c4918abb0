// Mounts the OAuth server on Fastify: the library's routes under /oauth and its metadata at the
// well-known addresses clients look for (RFC 8414 and OpenID discovery, issuer = the public base
// with no path), plus the protected resource metadata of /mcp (RFC 9728) that the 401 of /mcp
// points to. The library reads its own request bodies, so this scope parses none and hands the
// raw request and response over (reply.hijack()).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { AppError } from '../core/errors.js';
import { sendProblem } from '../channel-neutral/problem.js';
import { RateLimiter } from '../channel-neutral/rate-limit.js';
import { hostPolicyOf, hostRefusal, type HostPolicy } from '../mcp/allowed-hosts.js';
import type { OAuthServer } from './oauth-server.js';
import { MCP_SCOPE } from './provider-config.js';
import { mcpResourceOf, PROTECTED_RESOURCE_METADATA_PATH, publicBaseOf } from './public-base.js';

export interface OAuthRouteOptions {
  allowedHosts?: readonly string[];
}

/** The library serves one metadata document at both: OpenID discovery's address and RFC 8414's. */
const DISCOVERY_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

export function registerOAuthRoutes(server: FastifyInstance, app: App, oauth: OAuthServer, options: OAuthRouteOptions = {}): void {
  const hosts = hostPolicyOf(options.allowedHosts);
  // Registration and device codes are open to anyone: a per-address budget keeps that cheap.
  const limiter = new RateLimiter(app.config.rateLimit);

  void server.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));

    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const refusal = admitRequest(hosts, limiter, request);
      if (refusal) return sendProblem(reply, refusal);
      reply.hijack();
      const res = reply.raw;
      try {
        const instance = await oauth.instanceFor(publicBaseOf(request, app.publicUrl));
        await instance.handle(request.raw, res);
      } catch (error) {
        request.log.error({ err: error }, 'OAuth request failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
        res.end(JSON.stringify({ error: 'server_error', error_description: 'The sign-in server failed; the cause is in its log.' }));
      }
      return reply;
    };

    scope.all('/oauth/*', forward);
    for (const path of DISCOVERY_PATHS) scope.route({ method: ['GET', 'OPTIONS'], url: path, handler: forward });

    scope.route({
      method: ['GET', 'OPTIONS'],
      url: PROTECTED_RESOURCE_METADATA_PATH,
      handler: async (request, reply) => {
        const refusal = admitRequest(hosts, limiter, request);
        if (refusal) return sendProblem(reply, refusal);
        // Public metadata, read by browser-based clients too.
        void reply.header('Access-Control-Allow-Origin', '*').header('Cache-Control', 'public, max-age=300');
        if (request.method === 'OPTIONS') return reply.code(204).send();
        return reply.type('application/json').send(protectedResourceMetadata(publicBaseOf(request, app.publicUrl)));
      },
    });
  });
}

/** RFC 9728 metadata of the MCP endpoint: which authorization server issues its tokens. */
export function protectedResourceMetadata(base: string) {
  return {
    resource: mcpResourceOf(base),
    authorization_servers: [base],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'teaminfra MCP server',
    resource_documentation: `${base}/docs`,
  };
}

function admitRequest(hosts: HostPolicy, limiter: RateLimiter, request: FastifyRequest): AppError | undefined {
  // Host only, not Origin: browser-based clients call the token endpoint from their own origin
  // (CORS is the library's, per client). The Host names the issuer, so it must be ours.
  const refusal = hostRefusal(hosts, request.headers.host, undefined, request.socket.localAddress);
  if (refusal) return new AppError('host_not_allowed', refusal);
  const decision = limiter.take(`oauth:${request.ip}`);
  if (!decision.allowed) {
    return new AppError('rate_limited', `Too many sign-in requests from this address; try again in ${decision.resetSeconds} seconds.`, {
      retryAfterSeconds: decision.resetSeconds,
    });
  }
  return undefined;
}
