// teaminfra's HTTP server (REST, MCP and panel) as `teaminfra serve` builds it, over a seeded data
// directory, reporting its own event loop's delays: the parent asks 'eld-reset' before a load and
// 'eld' after it, and gets back the histogram's percentiles in milliseconds.
// argv: <dataDir> [default-rate-limit]: without the second, no request is ever rate limited
// (the loads send more than a minute's budget from one token or session).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createApp, defaultConfig } from '../../src/app.js';
import { buildHttpServer } from '../../src/http/server.js';
import { catalog } from '../../tools/index.js';
import { serveUntilStopped } from '../support/child-server.js';

const [dataDir, limits] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: panel-scale.js <dataDir> [default-rate-limit]');

const config = defaultConfig(dataDir);
const app = createApp(limits === 'default-rate-limit' ? config : { ...config, rateLimit: { limit: 1_000_000_000, windowSeconds: 60 } });
await app.db.ready();
const server = await buildHttpServer(app, catalog, { logger: false });
await server.listen({ port: 0, host: '127.0.0.1' });

// 1 ms resolution is the finest the histogram samples at; a blocked loop shows as a long delay.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
process.on('message', (message) => {
  if (message === 'eld-reset') { delay.reset(); process.send?.({ type: 'eld-reset' }); }
  if (message === 'eld') {
    const ms = (ns: number) => ns / 1e6;
    process.send?.({ type: 'eld', p50Ms: ms(delay.percentile(50)), p99Ms: ms(delay.percentile(99)), maxMs: ms(delay.max), meanMs: ms(delay.mean) });
  }
});
const address = server.server.address();
serveUntilStopped(typeof address === 'object' && address ? address.port : 0, async () => {
  await server.close();
  await app.close();
});
