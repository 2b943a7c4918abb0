// `serve` starts, answers and stops cleanly every time on the runtime we support. With
// better-sqlite3 12, Node 24 aborted (SIGABRT, `Assertion failed: (env) != nullptr` in
// Statement::~Statement) in 2 of 7 starts of `serve --demo`: the suite runs on whatever Node runs
// it (in CI, Node 24; .ci/run), so it first holds that this is Node 22 or newer.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { killProcessesMatching } from '../engine/support/engine-http.js';
import { startServe } from '../support/cli.js';
import { getJson, tempDataDir } from '../support/fixtures.js';

const STARTS = 20;

describe('serve --demo', () => {
  it(`starts ${STARTS} times in a row on Node 22 or newer, answers with its printed token, and exits 0 each time`, async () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
    for (let start = 1; start <= STARTS; start += 1) {
      // A fresh data directory each time: the demo is created at start, the busiest start there is.
      const dataDir = tempDataDir();
      try {
        const serve = await startServe(dataDir, ['--demo']);
        const token = /API token:\s+(tinf_\S+)/.exec(serve.output())?.[1];
        expect(token, `start ${start}:\n${serve.output()}`).toBeDefined();
        const services = await getJson(serve.baseUrl, '/api/service-erp', token as string);
        expect(services.status, `start ${start}`).toBe(200);
        expect(services.body.data.length, `start ${start}`).toBeGreaterThan(0);
        expect(await serve.stop(), `start ${start}:\n${serve.output()}`).toBe(0);
        expect(serve.output(), `start ${start}`).not.toContain('Assertion failed');
      } finally {
        await killProcessesMatching(dataDir);
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }, STARTS * 15_000);
});
