// GET /docs/api.json and the interactive documentation at /docs, served from the installed
// swagger-ui-dist package: no CDN, since these machines (and some customers') are offline.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Team Infrastructure API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<noscript>The interactive documentation needs JavaScript. The OpenAPI document is at <a href="/docs/api.json">/docs/api.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/docs/api.json', dom_id: '#swagger-ui', deepLinking: true,
  persistAuthorization: false, tryItOutEnabled: false });`;

const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function registerDocs(server: FastifyInstance, openApiDocument: object): void {
  const documentJson = JSON.stringify(openApiDocument);
  const assets = new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(join(swaggerDir, name))]));

  server.get('/docs/api.json', (_request, reply) =>
    reply.type('application/json').header('Content-Disposition', 'inline; filename="api.json"')
      .header('Access-Control-Allow-Origin', '*').send(documentJson));
  server.get('/docs', (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('Content-Security-Policy', DOCS_CSP).send(PAGE));
  server.get('/docs/assets/init.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT));
  server.get<{ Params: { name: string } }>('/docs/assets/:name', (request, reply) => {
    const body = assets.get(request.params.name);
    if (!body) return reply.callNotFound();
    return reply.type(ASSETS[request.params.name] as string).header('Cache-Control', 'public, max-age=86400').send(body);
  });
}
