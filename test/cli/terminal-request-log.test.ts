// What a newcomer sees of `npm start` in a terminal: the banner and the one-time token first, then
// one readable line per request, never JSON. A real `serve --demo` under a pseudo-terminal
// (util-linux's `script`), and the line format on its own.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { readableLine } from '../../src/cli/terminal-request-log.js';
import { CLI } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { killProcessesMatching } from '../engine/support/engine-http.js';


describe('serve in an interactive terminal', () => {
  const dataDir = tempDataDir();
  afterAll(async () => {
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the banner first and each request as one readable line, not JSON', async () => {
    expect(spawnSync('script', ['--version']).status, 'util-linux\'s script gives serve a terminal here').toBe(0);
    const env = { ...process.env };
    delete env.LOG_LEVEL;
    delete env.TEAMINFRA_LOG_FORMAT;
    const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} serve --demo --port 0 --data-dir ${JSON.stringify(dataDir)}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, TEAMINFRA_SMTP_PORT: '0' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    try {
      const deadline = Date.now() + 45_000;
      while (!/Try: curl/.test(output) && Date.now() < deadline) await sleep(100);
      const baseUrl = /serving on (http:\/\/\S+)/.exec(output)?.[1];
      const token = /API token:\s+(tinf_\S+)/.exec(output)?.[1];
      expect(baseUrl, output).toBeDefined();
      const response = await fetch(`${baseUrl}/api/service-erp`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      while (!/GET \/api\/service-erp 200/.test(output) && Date.now() < deadline) await sleep(100);

      const lines = output.replace(/\r/g, '').split('\n').filter((line) => line.trim() !== '');
      expect(lines[0], output).toMatch(/^teaminfra serving on http:/);
      expect(output).not.toMatch(/\{"level"/);
      expect(lines.find((line) => line.includes('GET /api/service-erp 200')), output).toMatch(/^\d\d:\d\d:\d\d GET \/api\/service-erp 200 [\d.]+ ms$/);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});

describe('a request log line made readable', () => {
  it('names the method, path, status and time of a request', () => {
    const line = JSON.stringify({ level: 30, time: Date.UTC(2026, 10, 28, 12, 4, 31), msg: 'request', req: { method: 'GET', url: '/api/token' }, statusCode: 401, responseTime: 1.5 });
    expect(readableLine(line)).toEqual({ level: 30, text: '12:04:31 GET /api/token 401 1.5 ms' });
  });

  it('says the level of a warning and keeps its message', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 28, 0, 0, 0), msg: 'slow engine' });
    expect(readableLine(line)).toEqual({ level: 40, text: '00:00:00 warn slow engine' });
  });
});
