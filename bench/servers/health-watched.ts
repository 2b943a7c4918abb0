// teaminfra's HTTP server over the health benchmark's data directory, with its health watcher
// switched on and off by the parent ('watch-on', 'watch-off'; each answered once done), so that
// the REST list is measured in one process with the watcher running and without it. 'passes'
// answers the watcher's passes so far (when each began, how long it took, how many it checked).
// Reconciliation and the operations worker do not run: the services are rows only.
// argv: <dataDir> <intervalMs>
import { createApp, defaultConfig } from '../../src/app.js';
import { buildHttpServer } from '../../src/http/server.js';
import { catalog } from '../../tools/index.js';
import { serveUntilStopped } from '../support/child-server.js';

const [dataDir, interval] = process.argv.slice(2);
if (!dataDir || !interval) throw new Error('usage: health-watched.js <dataDir> <intervalMs>');

const app = createApp({
  ...defaultConfig(dataDir), rateLimit: { limit: 1_000_000_000, windowSeconds: 60 }, engine: { healthIntervalMs: Number(interval) },
});
await app.db.ready();
const server = await buildHttpServer(app, catalog, { logger: false });
await server.listen({ port: 0, host: '127.0.0.1' });
const health = app.engine.health;

process.on('message', (message) => {
  if (message === 'watch-on') {
    health.start();
    // The first pass at once, so that a sample of a few intervals holds as many passes.
    void health.tick().finally(() => process.send?.({ type: 'watch-on' }));
  }
  if (message === 'watch-off') void health.close().then(() => process.send?.({ type: 'watch-off' }));
  if (message === 'passes') {
    process.send?.({ type: 'passes', passes: health.passes.map(({ startedAt, durationMs, checked, ran }) => ({ startedAt, durationMs, checked, ran })) });
  }
});
const address = server.server.address();
serveUntilStopped(typeof address === 'object' && address ? address.port : 0, async () => {
  await server.close();
  await app.close();
});
