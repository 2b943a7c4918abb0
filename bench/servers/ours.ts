// The real thing: teaminfra's HTTP server as `teaminfra serve` builds it, over the seeded data
// directory, with a rate limit high enough never to refuse the benchmark's load.
// argv: <dataDir> <logger: info|off> [PostgreSQL URL: the rows live there instead of SQLite] [pool size]
import { createApp, defaultConfig } from '../../src/app.js';
import { DEFAULT_POOL_SIZE } from '../../src/db/dialect-postgres.js';
import { buildHttpServer } from '../../src/http/server.js';
import { catalog } from '../../tools/index.js';
import { serveUntilStopped } from '../support/child-server.js';

const [dataDir, logging = 'info', databaseUrl, poolSize] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: ours.js <dataDir> [info|off] [postgres://...]');

const app = createApp({
  ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000_000, windowSeconds: 60 },
  // The pool `teaminfra serve` would have by default, unless the benchmark compares sizes.
  database: databaseUrl ? { url: databaseUrl, poolSize: poolSize ? Number(poolSize) : DEFAULT_POOL_SIZE } : undefined,
});
await app.db.ready();
// Same logger settings as `teaminfra serve` (stdout is /dev/null here), or none at all.
const server = await buildHttpServer(app, catalog, { logger: logging === 'off' ? false : { level: 'info' } });
await server.listen({ port: 0, host: '127.0.0.1' });
const address = server.server.address();
serveUntilStopped(typeof address === 'object' && address ? address.port : 0, async () => {
  await server.close();
  await app.close();
});
