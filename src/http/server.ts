// Builds the HTTP server: REST routes from the catalog, the OpenAPI document and docs page,
// one error formatter for everything Fastify itself refuses, and a request log in which no
// token value can appear.
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { App } from '../app.js';
import type { Capability } from '../core/capability.js';
import { AppError } from '../core/errors.js';
import { registerMcpHttp } from '../mcp/http-transport.js';
import { OAuthServer } from '../oauth/oauth-server.js';
import { registerOAuthRoutes } from '../oauth/oauth-routes.js';
import { registerPanel } from '../panel/panel-routes.js';
import { registerDocs } from './docs-page.js';
import {
  answerClientError, fromFastifyError, MAX_PATH_PARAMETER_LENGTH, refuseMissingHost, sendFrameworkError,
} from './framework-refusals.js';
import { buildOpenApiDocument } from './openapi.js';
import { sendProblem } from '../channel-neutral/problem.js';
import { RateLimiter } from '../channel-neutral/rate-limit.js';
import { registerRestRoutes } from './rest-adapter.js';

export interface HttpServerOptions {
  /** Fastify logger options; false for silence. Request URLs are scrubbed of anything token-shaped. */
  logger?: FastifyServerOptions['logger'];
  /** Host names /mcp answers to besides loopback and the connection's own address (DNS-rebinding guard). */
  allowedHosts?: readonly string[];
  /** How long close() lets requests in progress finish before it cuts their connections (default 10 s). */
  closeGraceMs?: number;
}

const CLOSE_GRACE_MS = 10_000;

const TOKEN_SHAPED = /tinf_[A-Za-z0-9]*/g;

export async function buildHttpServer(app: App, catalog: readonly Capability[], options: HttpServerOptions = {}): Promise<FastifyInstance> {
  const loggerOptions = options.logger === true ? { level: 'info' } : options.logger;
  const logger = loggerOptions ? { ...loggerOptions, serializers: { req: serializeRequest } } : false;
  const server = Fastify({
    logger,
    bodyLimit: app.config.bodyLimitBytes,
    trustProxy: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // Everything refused before a route runs is a problem document too (framework-refusals.ts).
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: answerClientError,
    http: { requireHostHeader: false },
    // One log line per request (written below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
  });

  // close() waits for the requests in progress; a client that holds one open (an MCP call waiting
  // for a long action, a stalled download or upload) must not keep the server, and so `serve`'s
  // SIGTERM, from ever ending: after the grace period, the connections still open are cut.
  server.addHook('preClose', (done) => {
    const cut = setTimeout(() => server.server.closeAllConnections(), options.closeGraceMs ?? CLOSE_GRACE_MS);
    cut.unref();
    server.server.once('close', () => clearTimeout(cut));
    done();
  });

  if (logger) {
    server.addHook('onResponse', (request, reply, done) => {
      request.log.info({ req: request, statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
      done();
    });
  }
  // Every answer carries these. Set on the raw response as each request arrives, they cost no
  // hook at send time (an onSend hook was measured at about 5% of a list request's CPU); a
  // route that sets its own Cache-Control or X-Frame-Options still wins, since Node lets the
  // headers an answer is written with replace these. One synchronous hook for both jobs.
  server.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader('X-Content-Type-Options', 'nosniff');
    reply.raw.setHeader('Cache-Control', 'no-store');
    // Nothing of ours is meant to be framed (clickjacking); CSP frame-ancestors says the same on HTML pages.
    reply.raw.setHeader('X-Frame-Options', 'DENY');
    // Answered here (no Host): the chain stops, so `done` is not called.
    if (refuseMissingHost(request, reply) === undefined) done();
  });

  server.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = fromFastifyError(error);
    if (appError.code === 'internal') request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, appError);
  });
  server.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new AppError('not_found', `There is no ${request.method} ${request.url.split('?')[0]?.replace(TOKEN_SHAPED, 'tinf_…')} in this API. The list of endpoints is at /docs.`)));

  // One limiter for REST and MCP: a token has one budget whichever channel it uses.
  const limiter = new RateLimiter(app.config.rateLimit);
  registerRestRoutes(server, catalog, app, limiter);
  registerDocs(server, buildOpenApiDocument(catalog));
  // Sign-in of assistants and the command line (src/oauth); its approval pages are in the panel.
  const oauth = new OAuthServer(app, (message, error) => server.log.error({ err: error }, message));
  server.addHook('onClose', async () => oauth.close());
  registerOAuthRoutes(server, app, oauth, { allowedHosts: options.allowedHosts });
  await registerPanel(server, app, oauth);
  registerMcpHttp(server, app, catalog, { allowedHosts: options.allowedHosts, limiter });
  return server;
}

function serializeRequest(request: { method: string; url: string; ip?: string }) {
  return { method: request.method, url: request.url.replace(TOKEN_SHAPED, 'tinf_[redacted]'), remoteAddress: request.ip };
}
