// Health as a newcomer meets it: `serve --demo` with the settings the README gives and nothing
// else (the watcher every 30 s): every service shows its health and every server its
// reachability, the running ones healthy; and a TEAMINFRA_HEALTH_INTERVAL_S that is no number of
// seconds stops serve at once with a sentence.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { killProcessesMatching } from '../engine/support/engine-http.js';
import { runCli, startServe } from '../support/cli.js';
import { getJson, tempDataDir } from '../support/fixtures.js';

describe('serve and health', () => {
  it('shows health on every service and reachable on every server with the default settings', async () => {
    const dataDir = tempDataDir();
    try {
      const serve = await startServe(dataDir, ['--demo']);
      const token = /API token:\s+(tinf_\S+)/.exec(serve.output())?.[1] as string;
      const services = await getJson(serve.baseUrl, '/api/service-erp', token);
      expect(services.body.data.length).toBeGreaterThan(0);
      for (const service of services.body.data) {
        expect(service.health).toBe(service.state === 'running' ? 'healthy' : service.state === 'failed' ? 'unhealthy' : 'unknown');
      }
      // The demo's staging copy runs: healthy since it started.
      const copies = [];
      for (const service of services.body.data) copies.push(...(await getJson(serve.baseUrl, `/api/service-erp/${service.id}/copies`, token)).body.data);
      expect(copies).toContainEqual(expect.objectContaining({ state: 'running', health: 'healthy', health_since: expect.any(String) }));
      expect((await getJson(serve.baseUrl, '/api/service-erp?health=unhealthy', token)).body.data).toEqual([]);
      const servers = await getJson(serve.baseUrl, '/api/servers', token);
      expect(servers.body.data.every((server: { reachable: boolean }) => server.reachable)).toBe(true);
      expect(await serve.stop()).toBe(0);
    } finally {
      await killProcessesMatching(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a health interval that is no number of seconds', async () => {
    const dataDir = tempDataDir();
    try {
      const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { env: { TEAMINFRA_HEALTH_INTERVAL_S: 'often', TEAMINFRA_SMTP_PORT: '0' } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('TEAMINFRA_HEALTH_INTERVAL_S must be a number of seconds from 0.1 to 86400 (default 30); it is "often".');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
