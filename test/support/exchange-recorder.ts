// Records every request a test server answers (method, path, status, the headers sent and the
// body when it is text), for test/support/openapi-conformance.ts to check against the served
// OpenAPI document when the suite closes the server. Hooks only watch: nothing is changed.
import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface Exchange {
  method: string;
  /** The path as requested, without the query. */
  path: string;
  status: number;
  /** Header names in lower case, as sent. */
  headers: Record<string, string>;
  /** The body as sent; 'stream' for a streamed file (not read here); undefined when empty. */
  body: string | 'stream' | undefined;
}

export const STREAMED = 'stream';

export function recordExchanges(server: FastifyInstance): Exchange[] {
  const exchanges: Exchange[] = [];
  const bodies = new WeakMap<FastifyRequest, Exchange['body']>();
  server.addHook('onSend', (request, _reply, payload, done) => {
    bodies.set(request, bodyOf(payload));
    done(null, payload);
  });
  server.addHook('onResponse', (request, reply, done) => {
    const headers: Record<string, string> = {};
    // Fastify hands its headers to writeHead(), so the raw response does not list them: merge both.
    for (const [name, value] of Object.entries({ ...reply.raw.getHeaders(), ...reply.getHeaders() })) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    exchanges.push({ method: request.method, path: request.url.split('?')[0] ?? '', status: reply.statusCode, headers, body: bodies.get(request) });
    done();
  });
  return exchanges;
}

function bodyOf(payload: unknown): Exchange['body'] {
  if (payload === null || payload === undefined || payload === '') return undefined;
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.length === 0 ? undefined : payload.toString('utf8');
  return STREAMED;
}
