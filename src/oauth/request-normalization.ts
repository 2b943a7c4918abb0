// What an authorization or token request is made to say before oidc-provider reads it. Real
// clients differ in small ways the library takes literally:
// - an assistant may send no scope, or only permission scopes: its token is for the MCP
//   resource all the same, so the request always asks for `mcp` (the library refuses a grant of
//   nothing);
// - the `resource` (RFC 8707) may come with a trailing slash (`<base>/mcp/`), from a client that
//   built it from the address it was given. That names our one MCP resource (or the API's), so
//   it is read as exactly that, in the authorization request, the code exchange and refreshes
//   alike (the library matches resource strings exactly between those steps). Anything else is
//   left as it is, and the library refuses it as invalid_target: never another audience.
//   (A missing resource is the library's defaultResource, provider-config.ts.)
// A form body is read here to do that, and handed on as a fresh stream carrying the same request.
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { errors, type Provider } from 'oidc-provider';
import { MCP_SCOPE, OAUTH_ROUTES } from './provider-config.js';
import { apiResourceOf, mcpResourceOf } from './public-base.js';

/** As the library's own body parser. */
const MAX_BODY_BYTES = 56 * 1024;

export function normalizeRequests(provider: Provider, base: string): void {
  const ours = new Map([mcpResourceOf(base), apiResourceOf(base)].map((resource) => [`${resource}/`, resource]));
  const resolve = (value: string) => ours.get(value) ?? value;

  provider.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === OAUTH_ROUTES.authorization) {
      const query = { ...ctx.query };
      const scopes = new Set(String(query.scope ?? '').split(' ').filter(Boolean));
      if (!scopes.has(MCP_SCOPE)) query.scope = [...scopes, MCP_SCOPE].join(' ');
      if (query.resource !== undefined) query.resource = Array.isArray(query.resource) ? query.resource.map(resolve) : resolve(query.resource);
      ctx.query = query;
    } else if (ctx.method === 'POST' && ctx.path === OAUTH_ROUTES.token && ctx.is('application/x-www-form-urlencoded')) {
      // (The authorization endpoint takes GET only: the library's default since v9.)
      const body = await readBody(ctx.req);
      const fields = new URLSearchParams(body.toString('utf8'));
      const resources = fields.getAll('resource');
      if (resources.some((resource) => resolve(resource) !== resource)) {
        fields.delete('resource');
        for (const resource of resources) fields.append('resource', resolve(resource));
        replaceBody(ctx, Buffer.from(fields.toString()));
      } else {
        replaceBody(ctx, body);
      }
    }
    await next();
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new errors.InvalidRequest('the request body is too large', 413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The same request with another body: what the library reads next is this stream. */
interface RequestHolder { req: IncomingMessage; request: { req: IncomingMessage }; response: { req: IncomingMessage } }

function replaceBody(ctx: RequestHolder, body: Buffer): void {
  const original = ctx.req;
  const replay = Object.assign(new PassThrough(), {
    headers: { ...original.headers, 'content-length': String(body.length) },
    rawHeaders: original.rawHeaders, method: original.method, url: original.url, socket: original.socket,
    httpVersion: original.httpVersion, httpVersionMajor: original.httpVersionMajor, httpVersionMinor: original.httpVersionMinor,
  }) as unknown as IncomingMessage;
  (replay as unknown as PassThrough).end(body);
  ctx.req = replay;
  ctx.request.req = replay;
  ctx.response.req = replay;
}
