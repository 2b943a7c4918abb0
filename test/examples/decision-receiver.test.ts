// The decision receiver of docs/webhooks-and-decisions.md (examples/decision-receiver.js): the
// page shows exactly that file, and the file, run as its own process against `teaminfra serve`, verifies decision.needed
// and answers through the API: it approves a held stop, which then runs, and leaves a held delete
// and a question pending for a person.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { admin, seedThroughCli, type ServeProcess, startServe } from '../support/cli.js';
import { tempDataDir } from '../support/fixtures.js';
import { act, killProcessesMatching, send, waitForOperation } from '../engine/support/engine-http.js';

const EXAMPLE = join(packageRoot, 'examples', 'decision-receiver.js');

/** The fenced block that follows the page's first mention of `examples/decision-receiver.js`. */
function pageBlock(): string {
  const page = readFileSync(join(packageRoot, 'docs', 'webhooks-and-decisions.md'), 'utf8');
  const mention = page.indexOf('`examples/decision-receiver.js`');
  expect(mention).toBeGreaterThan(0);
  const start = page.indexOf('```js\n', mention) + '```js\n'.length;
  return page.slice(start, page.indexOf('\n```\n', start) + 1);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

interface Example {
  child: ChildProcess;
  output: () => string;
  /** Waits for a line of its output matching `pattern`. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

function startExample(env: NodeJS.ProcessEnv): Promise<Example> {
  const child = spawn(process.execPath, [EXAMPLE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const example: Example = {
    child, output: () => output,
    async printed(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = output.split('\n').find((candidate) => pattern.test(candidate));
        if (line) return line;
        if (child.exitCode !== null) throw new Error(`the example exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`the example did not print ${pattern}:\n${output}`);
        await sleep(20);
      }
    },
  };
  return example.printed(/listening on port/).then(() => example);
}

describe('examples/decision-receiver.js', () => {
  const dataDir = tempDataDir();
  let serve: ServeProcess | undefined;
  let example: Example | undefined;
  afterAll(async () => {
    example?.child.kill('SIGKILL');
    await serve?.stop('SIGKILL');
    await killProcessesMatching(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is the code docs/webhooks-and-decisions.md shows', () => {
    expect(pageBlock()).toBe(readFileSync(EXAMPLE, 'utf8'));
  });

  it('approves a held stop, which then runs, and leaves a held delete and a question to a person', async () => {
    const { teamId, serverId, serviceId, token: ops } = await seedThroughCli(dataDir, { team: 'Receiver', service: 'Shop ERP' });
    const agent = (await admin(dataDir, ['create-token', '--team', teamId, '--name', 'coding agent',
      '--permissions', 'services:operate,services:write,decisions:request', '--needs-approval', 'stop_erp_service,delete_erp_service'])).token as string;
    const receiverToken = await admin(dataDir, ['create-token', '--team', teamId, '--name', 'decision receiver',
      '--accepted-by', 'api', '--permissions', 'decisions:answer']);
    const port = await freePort();
    const hook = await admin(dataDir, ['create-webhook', '--team', teamId, '--url', `http://127.0.0.1:${port}/decisions`,
      '--events', 'decision.needed', '--allow-private']);
    serve = await startServe(dataDir);
    example = await startExample({
      WEBHOOK_SECRET: hook.secret, TEAMINFRA_URL: serve.baseUrl, TEAMINFRA_TOKEN: receiverToken.token, PORT: String(port),
    });
    expect((await act(serve.baseUrl, ops, 'POST', `/api/service-erp/${serviceId}/start`)).state).toBe('succeeded');

    // A delivery it cannot verify is refused, and nothing is answered.
    const forged = await fetch(`http://127.0.0.1:${port}/decisions`, {
      method: 'POST', body: '{"type":"decision.needed","data":{}}',
      headers: { 'webhook-id': 'evt_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
    });
    expect(forged.status).toBe(400);

    const stop = (await send(serve.baseUrl, 'POST', `/api/service-erp/${serviceId}/stop`, agent)).body;
    expect(stop.state).toBe('awaiting_approval');
    await example.printed(new RegExp(`^${stop.decision_id}: approve stop_erp_service on ${serviceId}: 200$`));
    expect(await waitForOperation(serve.baseUrl, agent, stop.id)).toMatchObject({ state: 'succeeded' });
    expect((await send(serve.baseUrl, 'GET', `/api/decisions/${stop.decision_id}`, ops)).body).toMatchObject({
      state: 'answered', answer: 'approve', answered_by: { type: 'token', id: receiverToken.id, channel: 'api' },
    });
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).body.state).toBe('stopped');

    const deletion = (await send(serve.baseUrl, 'DELETE', `/api/service-erp/${serviceId}`, agent)).body;
    expect(deletion.state).toBe('awaiting_approval');
    await example.printed(new RegExp(`^${deletion.decision_id}: left for a person$`));
    const question = (await send(serve.baseUrl, 'POST', '/api/decisions', agent, { question: 'Rename the shop?', options: ['yes', 'no'] })).body;
    await example.printed(new RegExp(`^${question.id}: left for a person$`));
    expect((await send(serve.baseUrl, 'GET', `/api/decisions/${deletion.decision_id}`, ops)).body.state).toBe('pending');
    expect((await send(serve.baseUrl, 'GET', `/api/decisions/${question.id}`, ops)).body.state).toBe('pending');
    expect((await send(serve.baseUrl, 'GET', `/api/operations/${deletion.id}`, ops)).body.state).toBe('awaiting_approval');
    expect((await send(serve.baseUrl, 'GET', `/api/service-erp/${serviceId}`, ops)).status).toBe(200);
    expect(example.output()).not.toMatch(/API answered/);
  }, 90_000);
});
